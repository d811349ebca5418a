package grpcclient

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
)

// TestEndpointsWithoutACertificateUseCoresOwn: core's identity stays in
// eso's namespace, and stores of every namespace reach provider processes
// with it; without it they are refused rather than sent in plaintext.
func TestEndpointsWithoutACertificateUseCoresOwn(t *testing.T) {
	core := &types.NamespacedName{Namespace: "eso-system", Name: "eso-provider-client-tls"}
	r := New(nil, Options{CoreCertificate: core})
	for _, auth := range []*ssv2.ProviderAuth{nil, {}} {
		ep, err := r.Endpoint("provider:8443", auth, "team-a", "team-a")
		if err != nil || ep.Certificate == nil || *ep.Certificate != *core {
			t.Errorf("auth %+v: endpoint %v, %v; want core's certificate", auth, ep, err)
		}
	}
	own := &ssv2.ProviderAuth{ClientCertificate: &ssv2.SecretRef{Name: "team-a-client"}}
	if ep, err := r.Endpoint("provider:8443", own, "team-a", "team-a"); err != nil || ep.Certificate.String() != "team-a/team-a-client" {
		t.Errorf("a store's own certificate: %v, %v", ep, err)
	}
	if _, err := New(nil, Options{}).Endpoint("provider:8443", nil, "team-a", "team-a"); !errors.Is(err, ErrPlaintextRefused) {
		t.Errorf("without core's certificate: %v, want ErrPlaintextRefused", err)
	}
}
