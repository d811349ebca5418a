package provcerts

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

type fixture struct {
	t      *testing.T
	c      client.Client
	now    time.Time
	issuer *Issuer
}

func newFixture(t *testing.T, objs ...client.Object) *fixture {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, c: fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build(), now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	f.issuer = &Issuer{Client: f.c, Reader: f.c, Now: func() time.Time { return f.now },
		Config: Config{Namespace: "eso-system", DNSNames: []string{"eso-provider.eso-system.svc"}}}
	return f
}

func (f *fixture) secret(name string) *corev1.Secret {
	var s corev1.Secret
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: "eso-system", Name: name}, &s); err != nil {
		f.t.Fatal(err)
	}
	return &s
}

func certs(t *testing.T, data []byte) []*x509.Certificate {
	var out []*x509.Certificate
	for {
		var b *pem.Block
		if b, data = pem.Decode(data); b == nil {
			return out
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
}

// verify checks the leaf of Secret name against its own ca.crt at f.now.
func (f *fixture) verify(name string, usage x509.ExtKeyUsage, dns string) {
	f.t.Helper()
	s := f.secret(name)
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.Data["ca.crt"]) {
		f.t.Fatalf("%s: no CA bundle", name)
	}
	leaf := certs(f.t, s.Data[corev1.TLSCertKey])[0]
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{usage}, DNSName: dns, CurrentTime: f.now}); err != nil {
		f.t.Fatalf("%s does not verify: %v", name, err)
	}
}

func TestIssuesVerifiableCertificatesAndRenewsThem(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	next, err := f.issuer.Ensure(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f.verify("eso-provider-server-tls", x509.ExtKeyUsageServerAuth, "eso-provider.eso-system.svc")
	f.verify("eso-provider-client-tls", x509.ExtKeyUsageClientAuth, "")
	if s := f.secret("eso-provider-server-tls"); s.Type != corev1.SecretTypeTLS {
		t.Fatalf("type %s, want kubernetes.io/tls", s.Type)
	}
	if next < 59*24*time.Hour || next > 61*24*time.Hour {
		t.Fatalf("next run in %s, want two thirds of the 90-day leaf", next)
	}

	// Nothing due: nothing written.
	before := f.secret("eso-provider-server-tls").ResourceVersion
	if _, err := f.issuer.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if f.secret("eso-provider-server-tls").ResourceVersion != before {
		t.Fatal("a current certificate was rewritten")
	}

	// Leaves due: renewed under the same CA.
	caBefore := f.secret("eso-provider-ca").ResourceVersion
	f.now = f.now.Add(61 * 24 * time.Hour)
	if _, err := f.issuer.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if f.secret("eso-provider-server-tls").ResourceVersion == before || f.secret("eso-provider-ca").ResourceVersion != caBefore {
		t.Fatal("a due leaf must be renewed, the CA kept")
	}
	f.verify("eso-provider-server-tls", x509.ExtKeyUsageServerAuth, "eso-provider.eso-system.svc")

	// The Service's names changed: a new server certificate at once.
	f.issuer.Config.DNSNames = []string{"eso-provider.eso-system.svc", "eso-provider.eso-system.svc.cluster.local"}
	if _, err := f.issuer.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	f.verify("eso-provider-server-tls", x509.ExtKeyUsageServerAuth, "eso-provider.eso-system.svc.cluster.local")

	// CA due: a new CA, trusted together with the old one, and new leaves.
	f.now = f.now.Add(2 * 365 * 24 * time.Hour)
	if _, err := f.issuer.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(certs(t, f.secret("eso-provider-client-tls").Data["ca.crt"])); n != 2 {
		t.Fatalf("after a CA renewal the bundle holds %d CAs, want the new and the old", n)
	}
	f.verify("eso-provider-server-tls", x509.ExtKeyUsageServerAuth, "eso-provider.eso-system.svc")
	f.verify("eso-provider-client-tls", x509.ExtKeyUsageClientAuth, "")
}

func TestLeavesASecretItDidNotMakeAlone(t *testing.T) {
	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "eso-system", Name: "eso-provider-ca"},
		Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": []byte("cert-manager's")}}
	f := newFixture(t, foreign)
	if _, err := f.issuer.Ensure(context.Background()); !errors.Is(err, ErrNotOurs) {
		t.Fatalf("Ensure = %v, want ErrNotOurs", err)
	}
	if string(f.secret("eso-provider-ca").Data["tls.crt"]) != "cert-manager's" {
		t.Fatal("a foreign Secret was overwritten")
	}
}
