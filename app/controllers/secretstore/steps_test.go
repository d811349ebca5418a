package secretstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/stores"
	"github.com/eso-dev/eso/providers/plugin"
)

// scripted is a provider whose Validate and CheckAuth fail as told.
type scripted struct {
	plugin.Provider
	validate, auth error
}

func (s *scripted) Validate(context.Context, plugin.Ref, plugin.Scope) error { return s.validate }

func (s *scripted) NewClient(context.Context, plugin.Ref, plugin.Scope) (plugin.SecretsClient, error) {
	return authClient{s.auth}, nil
}

type authClient struct{ err error }

func (authClient) GetSecret(context.Context, esv1.ExternalSecretDataRemoteRef) ([]byte, error) {
	return nil, nil
}
func (authClient) GetSecretMap(context.Context, esv1.ExternalSecretDataRemoteRef) (map[string][]byte, error) {
	return nil, nil
}
func (authClient) GetAllSecrets(context.Context, esv1.ExternalSecretFind) (map[string][]byte, error) {
	return nil, nil
}
func (authClient) Capabilities() plugin.Capabilities { return plugin.ReadOnly }
func (authClient) Close(context.Context) error       { return nil }
func (c authClient) CheckAuth(context.Context) error { return c.err }

// TestValidationSteps: each step's failure gives the store its reason and
// retry; the first failing step decides.
func TestValidationSteps(t *testing.T) {
	network := errors.New("dial tcp: connection refused")
	cases := map[string]struct {
		kind           string
		conditions     []ssv2.ClusterSecretStoreCondition
		validate, auth error
		reason         string
		transient      bool
		recheck        bool
	}{
		"valid":                     {reason: ssv2.ReasonValid},
		"kind not compiled in":      {kind: "Nope", reason: ssv2.ReasonProviderNotCompiledIn},
		"invalid conditions":        {conditions: []ssv2.ClusterSecretStoreCondition{{NamespaceRegexes: []string{"("}}}, reason: ssv2.ReasonInvalidConditions},
		"configuration not found":   {validate: fmt.Errorf("%w: Recorder team-a/config", plugin.ErrConfigNotFound), reason: ssv2.ReasonProviderRefNotFound},
		"invalid configuration":     {validate: fmt.Errorf("%w: region", plugin.ErrInvalidConfig), reason: ssv2.ReasonInvalidProviderConfig},
		"provider unreachable":      {validate: network, reason: ssv2.ReasonValidationFailed, transient: true},
		"credentials refused":       {auth: fmt.Errorf("%w: token revoked", plugin.ErrAuthFailed), reason: ssv2.ReasonAuthenticationFailed, recheck: true},
		"validation fails first":    {validate: plugin.ErrInvalidConfig, auth: plugin.ErrAuthFailed, reason: ssv2.ReasonInvalidProviderConfig},
		"permission denied on auth": {auth: plugin.ErrOutOfScope, reason: ssv2.ReasonCrossNamespaceRefused},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			css := &ssv2.ClusterSecretStore{ObjectMeta: metav1.ObjectMeta{Name: "s", Generation: 1}}
			css.Spec.ProviderConfig.ProviderRef = ssv2.ProviderRef{Kind: "Recorder", Name: "config", Namespace: "team-a"}
			if tc.kind != "" {
				css.Spec.ProviderConfig.ProviderRef.Kind = tc.kind
			}
			css.Spec.Conditions = tc.conditions
			r, rec, _ := reconciler(t, css)
			script := &scripted{Provider: rec, validate: tc.validate, auth: tc.auth}
			rec.Provider = script
			got := r.checkReady(context.Background(), stores.FromClusterSecretStore(css))
			if got.reason != tc.reason || (got.transient != nil) != tc.transient || got.recheck != tc.recheck {
				t.Errorf("readiness %+v, want reason %s transient %v recheck %v", got, tc.reason, tc.transient, tc.recheck)
			}
		})
	}
}

// rotating is a provider whose credentials are replaced by rotate: a
// client holds the credentials of its login, and Vault-like, is refused
// once they are no longer the current ones (or when all are refused).
type rotating struct {
	plugin.Provider
	mu             sync.Mutex
	current, built int
	refuseAll      bool
}

func (p *rotating) NewClient(context.Context, plugin.Ref, plugin.Scope) (plugin.SecretsClient, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.built++
	return &rotatingClient{authClient: authClient{}, p: p, credentials: p.current}, nil
}

func (p *rotating) rotate() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.current++
}

func (p *rotating) logins() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.built
}

type rotatingClient struct {
	authClient
	p           *rotating
	credentials int
}

func (c *rotatingClient) CheckAuth(context.Context) error {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	if c.p.refuseAll || c.credentials != c.p.current {
		return fmt.Errorf("%w: token revoked", plugin.ErrAuthFailed)
	}
	return nil
}

// TestCheckAuthLogsInAgainBeforeRefusing: a cached client refused after
// its credentials were rotated is no verdict on the new ones: the check
// logs in again and the store stays Ready. Credentials refused on a new
// login are refused at once, without a second login.
func TestCheckAuthLogsInAgainBeforeRefusing(t *testing.T) {
	s := store("team-a", "s", "")
	r, rec, _ := reconciler(t, s)
	prov := &rotating{Provider: rec.Provider}
	rec.Provider = prov
	check := func() readiness {
		return r.checkReady(context.Background(), stores.FromSecretStore(s))
	}
	if got := check(); got.reason != ssv2.ReasonValid || prov.logins() != 1 {
		t.Fatalf("first check: %s after %d logins, want Valid after 1", got.reason, prov.logins())
	}
	if got := check(); got.reason != ssv2.ReasonValid || prov.logins() != 1 {
		t.Fatalf("second check: %s after %d logins, want Valid on the cached client", got.reason, prov.logins())
	}
	prov.rotate()
	if got := check(); got.reason != ssv2.ReasonValid || prov.logins() != 2 {
		t.Fatalf("after a rotation: %s after %d logins, want Valid after a new login (2)", got.reason, prov.logins())
	}
	prov.mu.Lock()
	prov.refuseAll = true
	prov.mu.Unlock()
	if got := check(); got.reason != ssv2.ReasonAuthenticationFailed || prov.logins() != 3 {
		t.Fatalf("refused credentials: %s after %d logins, want AuthenticationFailed after one more login (3)", got.reason, prov.logins())
	}
	if got := check(); got.reason != ssv2.ReasonAuthenticationFailed || prov.logins() != 4 {
		t.Fatalf("refused again: %s after %d logins, want AuthenticationFailed after a single new login (4)", got.reason, prov.logins())
	}
}

// TestStatusFollowsTheCurrentCause: a store that failed for one reason and
// now cannot be validated for another (its provider unreachable) shows the
// new cause, as Unknown, which does not gate; a store that was Ready keeps
// that verdict through the blip; once validation passes it is Ready.
func TestStatusFollowsTheCurrentCause(t *testing.T) {
	s := store("team-a", "s", "")
	r, rec, _ := reconciler(t, s)
	script := &scripted{Provider: rec.Provider}
	rec.Provider = script
	step := func(validate error) *metav1.Condition {
		t.Helper()
		script.validate = validate
		_, _ = r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(s)})
		var got ssv2.SecretStore
		if err := r.Client.Get(context.Background(), client.ObjectKeyFromObject(s), &got); err != nil {
			t.Fatal(err)
		}
		return meta.FindStatusCondition(got.Status.Conditions, ssv2.ConditionReady)
	}
	unreachable := errors.New("dial tcp 10.0.0.1:8200: connection refused")
	for i, want := range []struct {
		validate error
		status   metav1.ConditionStatus
		reason   string
	}{
		{fmt.Errorf("%w: credentials Secret team-a/token not found", plugin.ErrCredentialsNotFound), metav1.ConditionFalse, ssv2.ReasonInvalidProviderConfig},
		{unreachable, metav1.ConditionUnknown, ssv2.ReasonValidationFailed},
		{nil, metav1.ConditionTrue, ssv2.ReasonValid},
		{unreachable, metav1.ConditionTrue, ssv2.ReasonValid},
	} {
		c := step(want.validate)
		if c == nil || c.Status != want.status || c.Reason != want.reason {
			t.Fatalf("step %d (%v): Ready %+v, want %s/%s", i, want.validate, c, want.status, want.reason)
		}
		if want.status == metav1.ConditionUnknown && c.Message != unreachable.Error() {
			t.Errorf("step %d: message %q, want the current cause", i, c.Message)
		}
	}
}

// TestMisspelledKindNamesTheNearest: a kind that is a typo of a compiled-in
// one is reported as unknown with the nearest kind; one far from every
// kind as not compiled in.
func TestMisspelledKindNamesTheNearest(t *testing.T) {
	for kind, want := range map[string]string{
		"Recordr":          "unknown provider kind Recordr: did you mean Recorder?",
		"AWSSecretManager": "provider kind AWSSecretManager is not compiled into this eso binary",
	} {
		s := store("team-a", "s", "")
		s.Spec.ProviderConfig.ProviderRef.Kind = kind
		r, _, _ := reconciler(t, s)
		got := r.checkReady(context.Background(), stores.FromSecretStore(s))
		if got.reason != ssv2.ReasonProviderNotCompiledIn || !strings.HasPrefix(got.message, want) {
			t.Errorf("kind %s: %s %q, want %q", kind, got.reason, got.message, want)
		}
	}
}
