package server

import (
	"context"
	"crypto/tls"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	providerv1 "github.com/eso-dev/eso/apis/proto/provider/v1"
)

// caller is a client of lb presenting the certificate certPEM/keyPEM.
type caller struct {
	stores     providerv1.SecretStoreProviderClient
	generators providerv1.GeneratorProviderClient
	info       providerv1.InfoClient
}

// dialAs returns the function dialling lb with a certificate, so that an
// issuing call's two results can be passed straight to it.
func dialAs(t *testing.T, lb *loopback) func(certPEM, keyPEM []byte) caller {
	return func(certPEM, keyPEM []byte) caller { return dialWith(t, lb, certPEM, keyPEM) }
}

func dialWith(t *testing.T, lb *loopback, certPEM, keyPEM []byte) caller {
	t.Helper()
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	cfg := clientTLS(t, nil, lb.serverCA)
	cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }
	conn, err := grpc.NewClient(lb.addr, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return caller{stores: providerv1.NewSecretStoreProviderClient(conn), generators: providerv1.NewGeneratorProviderClient(conn),
		info: providerv1.NewInfoClient(conn)}
}

// everyTargetedCall makes each RPC that acts through a target, against t.
func everyTargetedCall(ctx context.Context, c caller, t *providerv1.Target) map[string]error {
	ref := &providerv1.RemoteRef{Key: "db"}
	errs := map[string]error{}
	_, errs["GetSecret"] = c.stores.GetSecret(ctx, &providerv1.GetSecretRequest{Target: t, Ref: ref})
	_, errs["GetSecretMap"] = c.stores.GetSecretMap(ctx, &providerv1.GetSecretRequest{Target: t, Ref: ref})
	_, errs["GetAllSecrets"] = c.stores.GetAllSecrets(ctx, &providerv1.GetAllSecretsRequest{Target: t, Find: &providerv1.Find{}})
	_, errs["PushSecret"] = c.stores.PushSecret(ctx, &providerv1.PushSecretRequest{Target: t, RemoteKey: "db", Value: []byte("x")})
	_, errs["DeleteSecret"] = c.stores.DeleteSecret(ctx, &providerv1.DeleteSecretRequest{Target: t, RemoteKey: "db"})
	_, errs["SecretExists"] = c.stores.SecretExists(ctx, &providerv1.SecretExistsRequest{Target: t, RemoteKey: "db"})
	_, errs["Validate"] = c.stores.Validate(ctx, &providerv1.ValidateRequest{Target: t})
	_, errs["Capabilities"] = c.stores.Capabilities(ctx, &providerv1.CapabilitiesRequest{Target: t})
	_, errs["CheckAuth"] = c.stores.CheckAuth(ctx, &providerv1.CheckAuthRequest{Target: t})
	pw := &providerv1.Target{Kind: "Password", Name: "pw", Namespace: t.Namespace, CredentialsNamespace: t.CredentialsNamespace}
	_, errs["Generate"] = c.generators.Generate(ctx, &providerv1.GenerateRequest{Target: pw})
	_, errs["Cleanup"] = c.generators.Cleanup(ctx, &providerv1.CleanupRequest{Target: pw, State: []byte(`{}`)})
	_, errs["ValidateGenerator"] = c.generators.ValidateGenerator(ctx, &providerv1.ValidateRequest{Target: pw})
	return errs
}

// TestCallersActOnlyInTheirNamespaces: a certificate bound to team-b gets
// PermissionDenied, with nothing read, for every call naming team-a (as the
// configuration's or the credentials' namespace); eso-core's certificate
// may act anywhere; a certificate naming no identity may only handshake.
func TestCallersActOnlyInTheirNamespaces(t *testing.T) {
	lb := startLoopback(t)
	ctx := callCtx(t)

	teamB := dialAs(t, lb)(lb.clientCA.IssueForNamespaces(t, "team-b-client", "team-b"))
	before := lb.reads.n.Load()
	for name, target := range map[string]*providerv1.Target{
		"team-a's configuration":            demo,
		"team-a's credentials":              {Kind: "Fake", Name: "demo", Namespace: "team-b", CredentialsNamespace: "team-a"},
		"team-a's configuration, own creds": {Kind: "Fake", Name: "demo", Namespace: "team-a", CredentialsNamespace: "team-b"},
	} {
		for call, err := range everyTargetedCall(ctx, teamB, target) {
			if status.Code(err) != codes.PermissionDenied {
				t.Errorf("%s with %s: %v, want PermissionDenied", call, name, err)
			}
		}
	}
	if n := lb.reads.n.Load() - before; n != 0 {
		t.Errorf("refused calls read %d objects from the API server", n)
	}
	if _, err := teamB.info.Handshake(ctx, &providerv1.HandshakeRequest{}); err != nil {
		t.Errorf("Handshake refused to a verified caller: %v", err)
	}

	// In its own namespace the bound caller is served.
	teamA := dialAs(t, lb)(lb.clientCA.IssueForNamespaces(t, "team-a-client", "team-a"))
	if resp, err := teamA.stores.GetSecret(ctx, &providerv1.GetSecretRequest{Target: demo, Ref: &providerv1.RemoteRef{Key: "api-token"}}); err != nil || string(resp.Value) != "t0ken" {
		t.Errorf("team-a's own read = %v", err)
	}
	if _, err := teamA.generators.Generate(ctx, &providerv1.GenerateRequest{Target: &providerv1.Target{Kind: "Password", Name: "pw", Namespace: "team-a", CredentialsNamespace: "team-a"}}); err != nil {
		t.Errorf("team-a's own Generate = %v", err)
	}

	// eso-core's identity acts anywhere (it enforced the namespace rules).
	core := dialAs(t, lb)(lb.clientCA.Issue(t, "eso-core", false))
	if resp, err := core.stores.GetSecret(ctx, &providerv1.GetSecretRequest{Target: demo, Ref: &providerv1.RemoteRef{Key: "api-token"}}); err != nil || string(resp.Value) != "t0ken" {
		t.Errorf("core's read = %v", err)
	}

	// A certificate from the right CA that says nothing about its holder.
	nobody := dialAs(t, lb)(lb.clientCA.IssueForNamespaces(t, "nobody"))
	for call, err := range everyTargetedCall(ctx, nobody, demo) {
		if status.Code(err) != codes.PermissionDenied {
			t.Errorf("%s without an identity: %v, want PermissionDenied", call, err)
		}
	}
}

// TestServerCertificateIsNoClientCertificate: the provider's own server
// certificate (ServerAuth only) cannot be used to call it.
func TestServerCertificateIsNoClientCertificate(t *testing.T) {
	lb := startLoopback(t)
	certPEM, keyPEM := lb.clientCA.Issue(t, "eso-provider", true)
	c := dialWith(t, lb, certPEM, keyPEM)
	if _, err := c.stores.GetSecret(callCtx(t), &providerv1.GetSecretRequest{Target: demo, Ref: &providerv1.RemoteRef{Key: "db"}}); err == nil {
		t.Fatal("a server certificate was accepted as a client's")
	}
}
