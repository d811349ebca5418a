package kubernetes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"k8s.io/client-go/rest"

	"github.com/eso-dev/eso/providers/kit"
	"github.com/eso-dev/eso/providers/plugin"
)

// maxTokenBytes bounds a bearer token read from a Secret: a ServiceAccount
// or OIDC token is a few KiB; anything larger would only be sent along with
// every request.
const maxTokenBytes = 16 << 10

// credential is what a connection presents to the API server, and until
// when (zero: until the server refuses it).
type credential struct {
	token   string
	keyPair *kit.KeyPair
	expires time.Time
}

// credential reads what auth names, in the credentials namespace only.
func (c *connection) credential(ctx context.Context) (credential, error) {
	a := c.spec.Auth
	switch {
	case a.ServiceAccount != nil:
		// Requested from this cluster, whichever server it is presented to.
		token, expires, err := kit.ServiceAccountToken(ctx, c.deps.Client, c.credentials, a.ServiceAccount.Name, a.ServiceAccount.Audiences, tokenLifetime)
		if err != nil {
			return credential{}, credentialError(err)
		}
		return credential{token: token, expires: expires}, nil
	case a.Token != nil:
		sel := a.Token.BearerToken
		v, err := kit.CredentialValue(ctx, c.deps.APIReader, c.credentials, sel.Name, sel.Key)
		if err != nil {
			return credential{}, err
		}
		token := bytes.TrimSpace(v)
		if len(token) > maxTokenBytes {
			return credential{}, fmt.Errorf("%w: auth.token.bearerToken %s/%s[%s] is over %s",
				plugin.ErrInvalidConfig, c.credentials, sel.Name, sel.Key, plugin.FormatBytes(maxTokenBytes))
		}
		return credential{token: string(token)}, nil
	case a.Cert != nil:
		pair, err := kit.ReadKeyPair(ctx, c.deps.APIReader, c.credentials, a.Cert.ClientCert, a.Cert.ClientKey)
		if err != nil {
			return credential{}, fmt.Errorf("auth.cert: %w", err)
		}
		return credential{keyPair: pair}, nil
	}
	return credential{}, fmt.Errorf("%w: auth needs exactly one of token, cert or serviceAccount", plugin.ErrInvalidConfig)
}

// credentialError keeps a failed TokenRequest's class without the API
// error inside it, so that the TokenRequest's answer (eso's own, to this
// cluster) is never taken for the server read's.
func credentialError(err error) error {
	if plugin.ClassOf(err) != plugin.ClassUnknown {
		return err
	}
	return errors.New(err.Error())
}

// restConfig is the client configuration for the server and identity the
// spec names. Nothing of eso's own identity is copied: for this cluster only
// its address and CA (rest.AnonymousClientConfig), for another cluster
// nothing at all.
func (c *connection) restConfig(ctx context.Context) (*rest.Config, time.Time, error) {
	var cfg *rest.Config
	if u := serverURL(c.spec); u == "" {
		if c.deps.RESTConfig == nil {
			return nil, time.Time{}, fmt.Errorf("%w: this process has no connection to its own cluster; set server.url", plugin.ErrInvalidConfig)
		}
		cfg = rest.AnonymousClientConfig(c.deps.RESTConfig)
	} else {
		ca, err := kit.TrustedCA(ctx, c.deps.APIReader, c.spec.Server.CABundle, c.spec.Server.CAProvider, c.credentials)
		if err != nil {
			return nil, time.Time{}, err
		}
		cfg = &rest.Config{Host: u, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
		// Another cluster may be its tenant's: bound every answer.
		cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
			return kit.LimitResponses(rt, plugin.MaxResponseBytes)
		}
	}
	cred, err := c.credential(ctx)
	if err != nil {
		return nil, time.Time{}, err
	}
	cfg.BearerToken = cred.token
	if cred.keyPair != nil {
		cfg.CertData, cfg.KeyData = cred.keyPair.CertPEM, cred.keyPair.KeyPEM
	}
	cfg.Timeout = callTimeout
	// A Proxy function makes client-go build this connection its own
	// transport, closed with it, instead of keeping one per distinct CA and
	// certificate in a process-wide cache for good.
	cfg.Proxy = http.ProxyFromEnvironment
	return cfg, cred.expires, nil
}

// checkCredentials resolves what the configuration references (the CA,
// the token or certificate Secrets), without a TokenRequest and without
// calling the server: a configuration's validation.
func (c *connection) checkCredentials(ctx context.Context) error {
	if u := serverURL(c.spec); u != "" {
		if _, err := kit.TrustedCA(ctx, c.deps.APIReader, c.spec.Server.CABundle, c.spec.Server.CAProvider, c.credentials); err != nil {
			return err
		}
	}
	if c.spec.Auth.ServiceAccount != nil {
		return nil
	}
	_, err := c.credential(ctx)
	return err
}
