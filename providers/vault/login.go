package vault

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"strings"
	"time"

	vault "github.com/hashicorp/vault/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/kit"
	"github.com/eso-dev/eso/providers/plugin"
)

// checkCredentials resolves what the configuration references in namespace
// (CA, token, AppRole secret ID, client certificate) without building a
// client or logging in: what validation checks. Logins read them again, so
// a rotation needs no new client.
func checkCredentials(ctx context.Context, deps plugin.Deps, spec *provv1.VaultSpec, namespace string) error {
	if _, err := trustedCA(ctx, deps.APIReader, spec, namespace); err != nil {
		return err
	}
	a := spec.Auth
	var err error
	switch {
	case a.TokenSecretRef != nil:
		_, err = secretValue(ctx, deps.APIReader, namespace, *a.TokenSecretRef)
	case a.AppRole != nil:
		_, err = secretValue(ctx, deps.APIReader, namespace, a.AppRole.SecretRef)
	case a.Cert != nil:
		if !strings.HasPrefix(spec.Server, "https://") {
			return fmt.Errorf("%w: cert auth needs an https:// server", plugin.ErrInvalidConfig)
		}
		_, err = readKeyPair(ctx, deps.APIReader, namespace, a.Cert)
	case a.Kubernetes != nil, a.JWT != nil:
		// The ServiceAccount token is requested at login.
	default:
		err = fmt.Errorf("%w: auth needs tokenSecretRef, appRole, kubernetes, jwt or cert", plugin.ErrInvalidConfig)
	}
	return err
}

// newSession builds the API client and its login from the configuration,
// resolving credentials in namespace only, at each login, so rotated ones
// are picked up without a new client.
func newSession(ctx context.Context, deps plugin.Deps, spec *provv1.VaultSpec, namespace string) (*session, error) {
	a := spec.Auth
	caPEM, err := trustedCA(ctx, deps.APIReader, spec, namespace)
	if err != nil {
		return nil, err
	}
	var clientCert *clientCertificate
	if a.Cert != nil {
		if !strings.HasPrefix(spec.Server, "https://") {
			return nil, fmt.Errorf("%w: cert auth needs an https:// server", plugin.ErrInvalidConfig)
		}
		clientCert = &clientCertificate{}
	}
	api, _, err := newAPIClient(spec, caPEM, clientCert)
	if err != nil {
		return nil, err
	}
	// Logins go out on a client of their own, without the token they replace.
	loginAPI, loginHTTP, err := newAPIClient(spec, caPEM, clientCert)
	if err != nil {
		return nil, err
	}

	s := &session{api: api, owned: true}
	if a.TokenSecretRef != nil {
		s.owned = false
		s.obtain = func(ctx context.Context) (*vault.SecretAuth, error) {
			token, err := secretValue(ctx, deps.APIReader, namespace, *a.TokenSecretRef)
			if err != nil {
				return nil, err
			}
			return &vault.SecretAuth{ClientToken: token}, nil // expiry unknown: used until refused
		}
		// Reading the token is not a login: take it now.
		if err := s.login(ctx); err != nil {
			return nil, err
		}
		return s, nil
	}
	if s.obtain, err = loginMethod(deps, a, namespace, loginAPI, loginHTTP, clientCert); err != nil {
		return nil, err
	}
	return s, nil
}

// loginMethod is how a session logs in with the auth method a names, on
// loginAPI, resolving credentials in namespace only.
func loginMethod(deps plugin.Deps, a provv1.VaultAuth, namespace string, loginAPI *vault.Client, loginHTTP *http.Client,
	clientCert *clientCertificate) (func(ctx context.Context) (*vault.SecretAuth, error), error) {
	switch {
	case a.AppRole != nil:
		mount := orDefault(a.AppRole.Path, "approle")
		return func(ctx context.Context) (*vault.SecretAuth, error) {
			secretID, err := secretValue(ctx, deps.APIReader, namespace, a.AppRole.SecretRef)
			if err != nil {
				return nil, err
			}
			return loginWith(ctx, loginAPI, mount, map[string]any{"role_id": a.AppRole.RoleID, "secret_id": secretID})
		}, nil
	case a.Kubernetes != nil, a.JWT != nil:
		k, mount := a.Kubernetes, "kubernetes"
		if k == nil {
			k, mount = a.JWT, "jwt"
		}
		mount = orDefault(k.MountPath, mount)
		return func(ctx context.Context) (*vault.SecretAuth, error) {
			jwt, err := serviceAccountToken(ctx, deps.Client, namespace, k.ServiceAccountRef)
			if err != nil {
				return nil, err
			}
			return loginWith(ctx, loginAPI, mount, map[string]any{"role": k.Role, "jwt": jwt})
		}, nil
	case a.Cert != nil:
		mount := orDefault(a.Cert.Path, "cert")
		return func(ctx context.Context) (*vault.SecretAuth, error) {
			pair, err := readKeyPair(ctx, deps.APIReader, namespace, a.Cert)
			if err != nil {
				return nil, err
			}
			clientCert.current.Store(pair)
			// A connection opened with an older certificate must not carry
			// the login.
			loginHTTP.CloseIdleConnections()
			body := map[string]any{}
			if a.Cert.Name != "" {
				body["name"] = a.Cert.Name
			}
			return loginWith(ctx, loginAPI, mount, body)
		}, nil
	}
	return nil, fmt.Errorf("%w: auth needs tokenSecretRef, appRole, kubernetes, jwt or cert", plugin.ErrInvalidConfig)
}

// newAPIClient is a Vault API client for spec's server and namespace,
// with no token yet, and the HTTP client it sends with.
func newAPIClient(spec *provv1.VaultSpec, caPEM []byte, clientCert *clientCertificate) (*vault.Client, *http.Client, error) {
	cfg := configWithoutEnvironment(spec.Server)
	if err := configureTLS(cfg, caPEM, clientCert); err != nil {
		return nil, nil, err
	}
	// The server may be a tenant's: no answer is read past the bound,
	// whatever it announces or streams.
	cfg.HttpClient.Transport = kit.LimitResponses(cfg.HttpClient.Transport, plugin.MaxResponseBytes)
	api, err := vault.NewClient(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", plugin.ErrInvalidConfig, err)
	}
	// NewClient takes a token, namespace and headers from eso's environment.
	api.ClearToken()
	headers := http.Header{}
	headers.Set(vault.RequestHeaderName, "true")
	api.SetHeaders(headers)
	if spec.Namespace != "" {
		api.SetNamespace(spec.Namespace)
	}
	return api, cfg.HttpClient, nil
}

// configWithoutEnvironment is the Vault client's default configuration for
// server, without what it takes from the VAULT_* environment of eso's
// process: an agent address (which would receive every request), a CA,
// client certificate, TLS server name or skip-verify. Those are eso's own and
// must not apply to a server a configuration names. Retry, timeout and
// proxy settings stay, as operator knobs.
func configWithoutEnvironment(server string) *vault.Config {
	cfg := vault.DefaultConfig()
	cfg.Address = server
	cfg.AgentAddress = ""
	cfg.SRVLookup = false
	if transport, ok := cfg.HttpClient.Transport.(*http.Transport); ok {
		var nextProtos []string // keep HTTP/2 as configured
		if transport.TLSClientConfig != nil {
			nextProtos = transport.TLSClientConfig.NextProtos
		}
		transport.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: nextProtos}
	}
	return cfg
}

// loginWith logs in at auth/<mount>/login with body.
func loginWith(ctx context.Context, api *vault.Client, mount string, body map[string]any) (*vault.SecretAuth, error) {
	mount = strings.Trim(mount, "/")
	secret, err := api.Logical().WriteWithContext(ctx, "auth/"+mount+"/login", body)
	if err != nil {
		return nil, loginError(err, mount)
	}
	if secret == nil {
		return nil, nil
	}
	return secret.Auth, nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func secretValue(ctx context.Context, r client.Reader, namespace string, sel provv1.SecretKeySelector) (string, error) {
	v, err := kit.CredentialValue(ctx, r, namespace, sel.Name, sel.Key)
	return strings.TrimSpace(string(v)), err
}

// defaultAudience is the audience of the tokens eso presents to Vault when
// none is configured: never the API server's own, so a token sent to a
// Vault server a tenant names cannot be used against the cluster. Vault roles
// should bind it (audience "vault").
const defaultAudience = "vault"

func serviceAccountToken(ctx context.Context, c client.Client, namespace string, sa provv1.KubernetesServiceAccount) (string, error) {
	audiences := sa.Audiences
	if len(audiences) == 0 {
		audiences = []string{defaultAudience}
	}
	token, _, err := kit.ServiceAccountToken(ctx, c, namespace, sa.Name, audiences, 10*time.Minute)
	return token, err
}
