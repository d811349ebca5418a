package vault

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	vault "github.com/hashicorp/vault/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers"
)

// renewBefore logs in again this long before the token expires.
const renewBefore = time.Minute

// session holds a logged-in Vault client and logs in again shortly before
// its token expires; a static token is used as is.
type session struct {
	api   *vault.Client
	login func(context.Context) (*vault.Secret, error) // nil for a static token

	mu      sync.Mutex
	expires time.Time
}

// client returns the API client with a valid token, logging in if needed.
func (s *session) client(ctx context.Context) (*vault.Client, error) {
	if s.login == nil {
		return s.api, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.expires.IsZero() && time.Until(s.expires) > renewBefore {
		return s.api, nil
	}
	secret, err := s.login(ctx)
	if err != nil {
		return nil, err
	}
	if secret == nil || secret.Auth == nil || secret.Auth.ClientToken == "" {
		return nil, fmt.Errorf("%w: Vault login returned no token", providers.ErrInvalidConfig)
	}
	s.api.SetToken(secret.Auth.ClientToken)
	ttl := time.Duration(secret.Auth.LeaseDuration) * time.Second
	if ttl <= 0 {
		ttl = 24 * time.Hour // non-expiring token: check again daily
	}
	s.expires = time.Now().Add(ttl)
	return s.api, nil
}

// newSession builds the API client and its login from the configuration,
// resolving credentials in namespace only.
func newSession(ctx context.Context, deps providers.Deps, spec *provv1.VaultSpec, namespace string) (*session, error) {
	cfg := vault.DefaultConfig()
	cfg.Address = spec.Server
	if len(spec.CABundle) > 0 {
		if err := cfg.ConfigureTLS(&vault.TLSConfig{CACertBytes: spec.CABundle}); err != nil {
			return nil, fmt.Errorf("%w: caBundle: %v", providers.ErrInvalidConfig, err)
		}
	}
	api, err := vault.NewClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", providers.ErrInvalidConfig, err)
	}
	api.ClearToken() // never a token from eso's environment
	if spec.Namespace != "" {
		api.SetNamespace(spec.Namespace)
	}
	s := &session{api: api}
	a := spec.Auth
	switch {
	case a.TokenSecretRef != nil:
		token, err := secretValue(ctx, deps.APIReader, namespace, *a.TokenSecretRef)
		if err != nil {
			return nil, err
		}
		api.SetToken(token)
	case a.AppRole != nil:
		secretID, err := secretValue(ctx, deps.APIReader, namespace, a.AppRole.SecretRef)
		if err != nil {
			return nil, err
		}
		path := orDefault(a.AppRole.Path, "approle")
		s.login = func(ctx context.Context) (*vault.Secret, error) {
			return loginWith(ctx, api, path, map[string]any{"role_id": a.AppRole.RoleID, "secret_id": secretID})
		}
	case a.Kubernetes != nil, a.JWT != nil:
		k, mount := a.Kubernetes, "kubernetes"
		if k == nil {
			k, mount = a.JWT, "jwt"
		}
		mount = orDefault(k.MountPath, mount)
		s.login = func(ctx context.Context) (*vault.Secret, error) {
			jwt, err := serviceAccountToken(ctx, deps.Client, namespace, k.ServiceAccountRef)
			if err != nil {
				return nil, err
			}
			return loginWith(ctx, api, mount, map[string]any{"role": k.Role, "jwt": jwt})
		}
	default:
		return nil, fmt.Errorf("%w: auth needs tokenSecretRef, appRole, kubernetes or jwt", providers.ErrInvalidConfig)
	}
	return s, nil
}

func loginWith(ctx context.Context, api *vault.Client, mount string, body map[string]any) (*vault.Secret, error) {
	secret, err := api.Logical().WriteWithContext(ctx, "auth/"+strings.Trim(mount, "/")+"/login", body)
	if err != nil {
		return nil, fmt.Errorf("%w: Vault login at auth/%s failed: %v", providers.ErrOutOfScope, mount, vaultMessage(err))
	}
	return secret, nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func secretValue(ctx context.Context, r client.Reader, namespace string, sel provv1.SecretKeySelector) (string, error) {
	v, err := providers.CredentialValue(ctx, r, namespace, sel.Name, sel.Key)
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
	token, _, err := providers.ServiceAccountToken(ctx, c, namespace, sa.Name, audiences, 10*time.Minute)
	return token, err
}

// vaultMessage keeps Vault's error list, which names paths and reasons, not
// secret data.
func vaultMessage(err error) string {
	if re, ok := err.(*vault.ResponseError); ok {
		return fmt.Sprintf("%d %s", re.StatusCode, strings.Join(re.Errors, "; "))
	}
	return err.Error()
}
