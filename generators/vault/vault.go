// Package vault generates dynamic secrets with one Vault API request (kind
// VaultDynamicSecret) and revokes what Vault leased for them. It logs in
// exactly as the Vault provider does and is compiled in with the vault
// build tag.
package vault

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	vaultapi "github.com/hashicorp/vault/api"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/kit"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/providers/v1blocks"
	vaultprovider "github.com/eso-dev/eso/providers/vault"
)

// Kind is the configuration kind this generator serves.
const Kind = "VaultDynamicSecret"

// Registration wires the generator into binaries built with the vault tag.
var Registration = plugin.Definition[*genv1.VaultDynamicSecret]{
	Name: "vault-dynamic-secret", Kind: Kind,
	Check: check,
	CheckCredentials: func(ctx context.Context, deps plugin.Deps, cfg *genv1.VaultDynamicSecret, scope plugin.Scope) error {
		spec, err := vaultSpec(cfg, scope.Namespace)
		if err != nil {
			return err
		}
		return vaultprovider.CheckCredentials(ctx, deps, spec, scope.Namespace)
	},
	Generate: generate,
	Cleanup:  cleanup,
}.Registration()

// State is what Cleanup revokes: the lease of the response, and the token
// it issued (by accessor). Both name what Vault issued; neither can be used
// to read or use it.
type State struct {
	LeaseID string `json:"leaseID,omitempty"`
	// TokenAccessor identifies a token the request issued (auth/token/create,
	// a login).
	TokenAccessor string `json:"tokenAccessor,omitempty"`
}

// generate sends the configured request and returns the selected part of the response.
//
// The login token of an appRole, kubernetes, jwt or cert login is revoked
// afterwards only when the response leased nothing: Vault would revoke the
// leases and child tokens created with it too.
func generate(ctx context.Context, deps plugin.Deps, cfg *genv1.VaultDynamicSecret, scope plugin.Scope) (map[string][]byte, plugin.State, error) {
	spec := &cfg.Spec
	connection, err := vaultSpec(cfg, scope.Namespace)
	if err != nil {
		return nil, nil, err
	}
	session, err := vaultprovider.NewSession(ctx, deps, connection, scope.Namespace)
	if err != nil {
		return nil, nil, err
	}
	api, err := session.Client(ctx)
	if err != nil {
		return nil, nil, err
	}
	applyRetrySettings(api, spec.RetrySettings)
	secret, err := send(ctx, api, spec)
	if err != nil {
		_ = session.Close(ctx)
		return nil, nil, err
	}
	state := stateOf(secret)
	values, err := output(secret, spec)
	if err != nil {
		// Nothing will clean up what this response issued: revoke it now.
		if state != nil {
			_ = revoke(ctx, api, *state)
		}
		_ = session.Close(ctx)
		return nil, nil, err
	}
	if state == nil {
		return values, nil, session.Close(ctx)
	}
	raw, err := json.Marshal(state)
	if err != nil {
		return nil, nil, err
	}
	return values, plugin.State(raw), nil
}

// cleanup revokes the lease
// (sys/leases/revoke) and the issued token (auth/token/revoke-accessor)
// with a fresh login. Vault answers both for what is already expired or
// revoked as for a success.
func cleanup(ctx context.Context, deps plugin.Deps, cfg *genv1.VaultDynamicSecret, scope plugin.Scope, raw plugin.State) error {
	var state State
	if err := json.Unmarshal(raw, &state); err != nil {
		return fmt.Errorf("%s state is not the JSON this generator writes: %w", Kind, err)
	}
	if state.LeaseID == "" && state.TokenAccessor == "" {
		return nil
	}
	connection, err := vaultSpec(cfg, scope.Namespace)
	if err != nil {
		return err
	}
	session, err := vaultprovider.NewSession(ctx, deps, connection, scope.Namespace)
	if err != nil {
		return err
	}
	// The cleanup login created nothing that must outlive it.
	defer func() { _ = session.Close(ctx) }()
	api, err := session.Client(ctx)
	if err != nil {
		return err
	}
	return revoke(ctx, api, state)
}

// vaultSpec is the connection and login the Vault provider's session
// takes: the spec-level fields, or upstream's provider block read as a v1
// store's Vault block is (providers/v1blocks). credentials is the
// namespace the credentials are read in: the only one a reference in the
// provider block may name.
func vaultSpec(cfg *genv1.VaultDynamicSecret, credentials string) (*provv1.VaultSpec, error) {
	spec := &cfg.Spec
	if spec.Provider == nil {
		if spec.Server == "" || spec.Auth == nil {
			return nil, fmt.Errorf("%w: server and auth are required when provider is not set", plugin.ErrInvalidConfig)
		}
		return &provv1.VaultSpec{Server: spec.Server, Namespace: spec.Namespace, CABundle: spec.CABundle,
			CAProvider: spec.CAProvider, Auth: *spec.Auth}, nil
	}
	f := &blockFindings{namespace: credentials}
	if spec.Server != "" || spec.Auth != nil || spec.Namespace != "" || len(spec.CABundle) > 0 || spec.CAProvider != nil {
		f.Refuse("spec", "set the connection either under provider (upstream's shape) or at spec level (server, namespace, caBundle, caProvider, auth), not both")
	}
	connection := v1blocks.VaultConnection(f, "spec.provider", spec.Provider)
	p := spec.Provider
	if p.ReadYourWrites || p.ForwardInconsistent || p.CheckAndSet != nil {
		f.Refuse("spec.provider.readYourWrites/forwardInconsistent/checkAndSet", "settings of a store's KV reads and writes, without effect on a generator's request: leave them out")
	}
	return &connection, f.err()
}

// blockFindings collects what eso cannot serve of an upstream provider
// block. Credentials are read in the generator's credentials namespace, so
// a reference may name no other (upstream ignores the field for
// generators; eso refuses rather than ignore a field that looks like it
// reaches another namespace). A field the translation notes as without
// effect is refused too: a generator configuration has no status to name
// it in.
type blockFindings struct {
	namespace          string
	refused, elsewhere []string
}

func (f *blockFindings) Namespace(path string, ns *string) {
	if ns != nil && *ns != "" && *ns != f.namespace {
		f.elsewhere = append(f.elsewhere, path+".namespace: a generator reads credentials from "+f.namespace+" only: leave namespace out")
	}
}

func (f *blockFindings) Refuse(path, why string) { f.refused = append(f.refused, path+": "+why) }

func (f *blockFindings) Note(path, why string) {
	f.Refuse(path, why+" (without effect: leave it out)")
}

// err is the refusal: out of scope when a reference names another
// namespace, an invalid configuration otherwise.
func (f *blockFindings) err() error {
	switch {
	case len(f.elsewhere) > 0:
		return fmt.Errorf("%w: %s", plugin.ErrOutOfScope, strings.Join(append(f.elsewhere, f.refused...), "; "))
	case len(f.refused) > 0:
		return fmt.Errorf("%w: %s", plugin.ErrInvalidConfig, strings.Join(f.refused, "; "))
	}
	return nil
}

// check rejects a configuration that cannot work; the credentials
// namespace is not known yet, so references are checked against the
// configuration's own.
func check(cfg *genv1.VaultDynamicSecret) error {
	if _, err := vaultSpec(cfg, cfg.Namespace); err != nil {
		return err
	}
	return checkRequest(&cfg.Spec)
}

// checkRequest repeats the schema's rules on the request, for objects that
// bypassed it.
func checkRequest(spec *genv1.VaultDynamicSecretSpec) error {
	path := strings.Trim(spec.Path, "/")
	switch {
	case path == "":
		return fmt.Errorf("%w: path is required", plugin.ErrInvalidConfig)
	case strings.HasPrefix(path, "v1/"):
		return fmt.Errorf("%w: path %q is relative to /v1/: leave out the prefix", plugin.ErrInvalidConfig, spec.Path)
	}
	switch method(spec) {
	case "GET", "LIST", "POST", "PUT", "DELETE":
	default:
		return fmt.Errorf("%w: method %q (want GET, LIST, POST, PUT or DELETE)", plugin.ErrInvalidConfig, spec.Method)
	}
	if len(spec.GetParameters) > 0 && method(spec) != "GET" {
		return fmt.Errorf("%w: getParameters are sent with method GET only", plugin.ErrInvalidConfig)
	}
	switch spec.ResultType {
	case "", genv1.VaultResultData, genv1.VaultResultAuth, genv1.VaultResultRaw:
	default:
		return fmt.Errorf("%w: resultType %q (want Data, Auth or Raw)", plugin.ErrInvalidConfig, spec.ResultType)
	}
	return nil
}

func method(spec *genv1.VaultDynamicSecretSpec) string {
	if spec.Method == "" {
		return "GET"
	}
	return strings.ToUpper(spec.Method)
}

// applyRetrySettings makes the client retry maxRetries times, retryInterval
// apart, on the answers the Vault client retries (5xx, 412, network errors).
func applyRetrySettings(api *vaultapi.Client, rs *genv1.VaultRetrySettings) {
	if rs == nil {
		return
	}
	if rs.MaxRetries != nil {
		api.SetMaxRetries(int(*rs.MaxRetries))
	}
	if rs.RetryInterval != nil && rs.RetryInterval.Duration > 0 {
		api.SetMinRetryWait(rs.RetryInterval.Duration)
		api.SetMaxRetryWait(rs.RetryInterval.Duration)
	}
}

// send sends the configured request. Parameters are the JSON body, or the
// query of a GET or LIST; getParameters are added to a GET's query. A LIST
// is sent as Vault's client sends it: a GET with list=true.
func send(ctx context.Context, api *vaultapi.Client, spec *genv1.VaultDynamicSecretSpec) (*vaultapi.Secret, error) {
	m, path := method(spec), strings.Trim(spec.Path, "/")
	what := m + " " + path
	httpMethod := m
	if m == "LIST" {
		httpMethod = "GET"
	}
	req := api.NewRequest(httpMethod, "/v1/"+path)
	if httpMethod == "GET" {
		for k, v := range spec.Parameters {
			req.Params.Set(k, queryValue(v.Raw))
		}
		for k, values := range spec.GetParameters {
			for _, v := range values {
				req.Params.Add(k, v)
			}
		}
		if m == "LIST" {
			req.Params.Set("list", "true")
		}
	} else if len(spec.Parameters) > 0 {
		body := make(map[string]json.RawMessage, len(spec.Parameters))
		for k, v := range spec.Parameters {
			body[k] = v.Raw
		}
		if err := req.SetJSONBody(body); err != nil {
			return nil, fmt.Errorf("%w: parameters: %v", plugin.ErrInvalidConfig, err)
		}
	}
	secret, err := api.Logical().ParseRawResponseAndCloseBody(api.RawRequestWithContext(ctx, req))
	if err != nil {
		return nil, vaultprovider.RequestError(err, what)
	}
	if secret == nil {
		return nil, fmt.Errorf("%s: Vault answered 404 or with nothing: check the path and the role it names", what)
	}
	return secret, nil
}

// queryValue is a JSON string's text, or any other JSON value as written.
func queryValue(raw []byte) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(bytes.TrimSpace(raw))
}

// output turns the part of the response resultType selects into values:
// strings as they are, anything else as JSON (kit.FieldMap).
func output(secret *vaultapi.Secret, spec *genv1.VaultDynamicSecretSpec) (map[string][]byte, error) {
	part := spec.ResultType
	if part == "" {
		part = genv1.VaultResultData
	}
	var selected any
	switch part {
	case genv1.VaultResultData:
		if secret.Data != nil {
			selected = secret.Data
		}
	case genv1.VaultResultAuth:
		if secret.Auth != nil {
			selected = secret.Auth
		}
	case genv1.VaultResultRaw:
		selected = secret
	}
	out := map[string][]byte{}
	if selected != nil {
		raw, err := json.Marshal(selected)
		if err != nil {
			// The error names the Go type, not the value.
			return nil, fmt.Errorf("%s: the response cannot be written as JSON: %v", Kind, err)
		}
		if out, err = kit.FieldMap(raw); err != nil {
			return nil, fmt.Errorf("%s: %w", Kind, err)
		}
	}
	if len(out) == 0 && !spec.AllowEmptyResponse {
		return nil, fmt.Errorf("%s %s: Vault's response has no %s (set allowEmptyResponse if that is expected)",
			method(spec), strings.Trim(spec.Path, "/"), strings.ToLower(string(part)))
	}
	return out, nil
}

// stateOf is what the response issued that can be revoked, or nil. Batch
// tokens have no accessor: they cannot be revoked and only expire.
func stateOf(secret *vaultapi.Secret) *State {
	s := State{LeaseID: secret.LeaseID}
	if secret.Auth != nil {
		s.TokenAccessor = secret.Auth.Accessor
	}
	if s.LeaseID == "" && s.TokenAccessor == "" {
		return nil
	}
	return &s
}

// revokeTimeout bounds each revocation, so an unreachable Vault does not
// hold up a cleanup.
const revokeTimeout = 30 * time.Second

// revoke revokes the lease and the token state names. Vault treats an
// unknown (expired, already revoked) lease or accessor as revoked.
func revoke(ctx context.Context, api *vaultapi.Client, state State) error {
	var errs []error
	if state.LeaseID != "" {
		rctx, cancel := context.WithTimeout(ctx, revokeTimeout)
		err := api.Sys().RevokeWithContext(rctx, state.LeaseID)
		cancel()
		if err != nil {
			errs = append(errs, vaultprovider.RequestError(err, fmt.Sprintf("revoking lease %q", state.LeaseID)))
		}
	}
	if state.TokenAccessor != "" {
		rctx, cancel := context.WithTimeout(ctx, revokeTimeout)
		err := api.Auth().Token().RevokeAccessorWithContext(rctx, state.TokenAccessor)
		cancel()
		if err != nil {
			errs = append(errs, vaultprovider.RequestError(err, "revoking the issued token (by accessor)"))
		}
	}
	return errors.Join(errs...)
}
