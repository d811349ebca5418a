// Package vault is the provider for HashiCorp Vault KV engines v1 and v2
// (kind Vault), compiled in with the vault build tag.
package vault

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	vault "github.com/hashicorp/vault/api"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/kit"
	"github.com/eso-dev/eso/providers/plugin"
)

// Kind is the configuration kind this provider serves.
const Kind = "Vault"

// Registration describes the provider to the registry. The login happens
// on a client's first use; the token is then renewed shortly before it
// expires, and replaced by a new login only when Vault no longer renews or
// accepts it.
var Registration = plugin.Definition[*provv1.Vault]{
	Name: "vault", Kind: Kind,
	CheckCredentials: func(ctx context.Context, deps plugin.Deps, cfg *provv1.Vault, scope plugin.Scope) error {
		return checkCredentials(ctx, deps, &cfg.Spec, scope.Namespace)
	},
	NewClient: connect,
}.Registration()

func connect(ctx context.Context, deps plugin.Deps, cfg *provv1.Vault, scope plugin.Scope) (plugin.SecretsClient, error) {
	s, err := newSession(ctx, deps, &cfg.Spec, scope.Namespace)
	if err != nil {
		return nil, err
	}
	c := &Client{session: s, mount: strings.Trim(orDefault(cfg.Spec.Path, "secret"), "/"), v2: cfg.Spec.Version != "v1"}
	c.JSONValues = kit.JSONValues{Value: c.data, Metadata: c.customMetadata}
	return c, nil
}

// Client reads one KV mount.
type Client struct {
	// JSONValues serves GetSecret and GetSecretMap from data and
	// customMetadata.
	kit.JSONValues
	session *session
	mount   string
	v2      bool
}

// GetAllSecrets implements plugin.SecretsClient: secrets under find.path
// (recursively), whose name matches and, on KV v2, whose custom metadata
// carries all tags. Keys are paths relative to the mount.
func (c *Client) GetAllSecrets(ctx context.Context, find esv1.ExternalSecretFind) (map[string][]byte, error) {
	if !c.v2 && len(find.Tags) > 0 {
		return nil, fmt.Errorf("%w: KV v1 secrets have no metadata to match tags against", plugin.ErrNotSupported)
	}
	re, err := kit.NameRegexp(find)
	if err != nil {
		return nil, err
	}
	root := ""
	if find.Path != nil {
		root = strings.Trim(*find.Path, "/")
	}
	var budget kit.FindBudget
	keys, err := c.list(ctx, root, 0, &budget)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, key := range keys {
		if re != nil && !re.MatchString(key) {
			continue
		}
		if len(find.Tags) > 0 {
			meta, err := c.customMetadata(ctx, key)
			if err != nil {
				return nil, err
			}
			if !kit.HasTags(meta, find.Tags) {
				continue
			}
		}
		v, err := c.data(ctx, key, "")
		if errors.Is(err, plugin.ErrSecretNotFound) {
			continue // deleted (or only deleted versions) since the list: not part of the result
		}
		if err != nil {
			return nil, err
		}
		if err := budget.Result(v); err != nil {
			return nil, fmt.Errorf("find under %q: %w", root, err)
		}
		out[key] = v
	}
	return out, nil
}

// kvPath is the API path of key in the mount's section ("data", "metadata",
// or "" on KV v1). Keys are refused if they could leave the mount ("..",
// a leading "/"): a tenant must not reach auth/token/lookup-self and the like.
func (c *Client) kvPath(section, key string) (string, error) {
	if strings.HasPrefix(key, "/") || slices.Contains(strings.Split(key, "/"), "..") {
		return "", fmt.Errorf("%w: key %q would leave the %s mount", plugin.ErrOutOfScope, key, c.mount)
	}
	if section == "" {
		return path.Join(c.mount, key), nil
	}
	return path.Join(c.mount, section, key), nil
}

// section is where KV keeps a key's data or metadata: "" on KV v1.
func (c *Client) section(s string) string {
	if c.v2 {
		return s
	}
	return ""
}

// list returns the secret paths under dir, recursively; dir is depth
// folder levels below the find's root. budget bounds the depth and the
// names listed, so a tree a tenant fills cannot keep eso listing.
func (c *Client) list(ctx context.Context, dir string, depth int, budget *kit.FindBudget) ([]string, error) {
	if err := budget.Depth(depth); err != nil {
		return nil, fmt.Errorf("find at %q: %w", dir, err)
	}
	api, err := c.session.client(ctx)
	if err != nil {
		return nil, err
	}
	listPath, err := c.kvPath(c.section("metadata"), dir)
	if err != nil {
		return nil, err
	}
	secret, err := api.Logical().ListWithContext(ctx, listPath)
	if err != nil {
		return nil, c.checked(readError(err, dir, ""))
	}
	if secret == nil {
		return nil, nil
	}
	raw, _ := secret.Data["keys"].([]any)
	if err := budget.Listed(len(raw)); err != nil {
		return nil, fmt.Errorf("find at %q: %w", dir, err)
	}
	var out []string
	for _, k := range raw {
		name, _ := k.(string)
		full := strings.TrimPrefix(path.Join(dir, name), "/")
		if strings.HasSuffix(name, "/") {
			sub, err := c.list(ctx, full, depth+1, budget)
			if err != nil {
				return nil, err
			}
			out = append(out, sub...)
			continue
		}
		out = append(out, full)
	}
	return out, nil
}

// data reads the secret's data as a JSON object; version is a KV v2 version
// number.
func (c *Client) data(ctx context.Context, key, version string) ([]byte, error) {
	api, err := c.session.client(ctx)
	if err != nil {
		return nil, err
	}
	p, err := c.kvPath(c.section("data"), key)
	if err != nil {
		return nil, err
	}
	var secret *vault.Secret
	if c.v2 {
		var params map[string][]string
		if version != "" {
			params = map[string][]string{"version": {version}}
		}
		secret, err = api.Logical().ReadWithDataWithContext(ctx, p, params)
	} else {
		if version != "" {
			return nil, fmt.Errorf("%w: KV v1 secrets have no versions (secret %q)", plugin.ErrNotSupported, key)
		}
		secret, err = api.Logical().ReadWithContext(ctx, p)
	}
	if err != nil {
		return nil, c.checked(readError(err, key, version))
	}
	if secret == nil || secret.Data == nil {
		return nil, fmt.Errorf("%w: secret %q version %q", plugin.ErrSecretNotFound, key, version)
	}
	data := secret.Data
	if c.v2 {
		inner, ok := data["data"].(map[string]any)
		if !ok { // deleted or destroyed version
			return nil, fmt.Errorf("%w: secret %q version %q", plugin.ErrSecretNotFound, key, version)
		}
		data = inner
	}
	return json.Marshal(data)
}

// customMetadata is a KV v2 secret's custom metadata, for metadataPolicy Fetch.
func (c *Client) customMetadata(ctx context.Context, key string) (map[string]string, error) {
	if !c.v2 {
		return nil, fmt.Errorf("%w: KV v1 secrets have no metadata", plugin.ErrNotSupported)
	}
	meta, err := c.metadata(ctx, key)
	if err != nil {
		return nil, err
	}
	if meta == nil {
		return nil, fmt.Errorf("%w: secret %q", plugin.ErrSecretNotFound, key)
	}
	return meta.custom, nil
}

// Capabilities implements plugin.SecretsClient: KV v2 can be written.
func (c *Client) Capabilities() plugin.Capabilities {
	if c.v2 {
		return plugin.ReadWrite
	}
	return plugin.ReadOnly
}

// checked passes err on, first dropping the session's token if Vault
// refused it, so that the next call logs in (or rereads tokenSecretRef).
func (c *Client) checked(err error) error {
	if errors.Is(err, plugin.ErrAuthFailed) {
		c.session.refused()
	}
	return err
}

// CheckAuth implements plugin.AuthChecker: auth/token/lookup-self with
// the current token, after logging in if needed.
func (c *Client) CheckAuth(ctx context.Context) error {
	api, err := c.session.client(ctx)
	if err != nil {
		return err
	}
	_, err = api.Auth().Token().LookupSelfWithContext(ctx)
	if err != nil {
		return c.checked(lookupError(err))
	}
	return nil
}

// Close implements plugin.SecretsClient: it revokes the token eso logged
// in for, never a token from tokenSecretRef.
func (c *Client) Close(ctx context.Context) error { return c.session.close(ctx) }

var _ plugin.AuthChecker = (*Client)(nil)
