package integration

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	vaultapi "github.com/hashicorp/vault/api"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	genv2 "github.com/eso-dev/eso/apis/generator/v2alpha1"
	genkinds "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/vault/vaulttest"
)

// tokenRecorder is a tenant's own "Vault": it records the token of every
// request it receives.
type tokenRecorder struct {
	mu     sync.Mutex
	tokens []string
}

func (r *tokenRecorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.tokens = append(r.tokens, req.Header.Get("X-Vault-Token"))
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"data":{}}`))
}

func (r *tokenRecorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.tokens)
}

// TestForgedGeneratorStatesAreNeverUsed is the attack of a tenant who
// creates GeneratorStates by hand: naming its own Vault configuration (its
// own server) with the victim namespace's credentials, or the victim's own
// configuration with a lease of the victim's. eso must not send the
// victim's token anywhere, must not revoke the victim's token, and must mark
// the states as not its own.
func TestForgedGeneratorStatesAreNeverUsed(t *testing.T) {
	root := vaulttest.Start(t)
	runEso(t, testConfig())
	victim := env.Namespace(t, "forgery-victim", nil)
	tenant := env.Namespace(t, "forgery-tenant", nil)

	// The victim's credentials: a Vault token of its own, and a token it
	// issued whose revocation would break its application.
	victimToken := createToken(t, root)
	victimLease := createToken(t, root)
	lookup, err := root.Auth().Token().Lookup(victimLease)
	if err != nil {
		t.Fatal(err)
	}
	accessor, _ := lookup.Data["accessor"].(string)

	evil := &tokenRecorder{}
	evilServer := httptest.NewServer(evil)
	t.Cleanup(evilServer.Close)

	vaultConfig := func(ns, name, server string) *genkinds.VaultDynamicSecret {
		return &genkinds.VaultDynamicSecret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: genkinds.VaultDynamicSecretSpec{
			Server: server,
			Auth:   &provv1.VaultAuth{TokenSecretRef: &provv1.SecretKeySelector{Name: "vault-token", Key: "token"}},
			Path:   "auth/token/create", Method: "POST", ResultType: genkinds.VaultResultAuth,
		}}
	}
	create(t,
		plainSecret(victim, "vault-token", map[string]string{"token": victimToken}),
		vaultConfig(victim, "victim-tokens", root.Address()),
		vaultConfig(tenant, "evil", evilServer.URL),
	)

	state := fmt.Appendf(nil, `{"tokenAccessor":%q}`, accessor)
	forged := func(name string, ref genv2.ProviderRef, credentials string, annotations map[string]string) *genv2.GeneratorState {
		return &genv2.GeneratorState{
			ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: name, Finalizers: []string{genv2.FinalizerCleanup},
				Labels: map[string]string{genv2.LabelExternalSecret: "app"}, Annotations: annotations},
			Spec: genv2.GeneratorStateSpec{
				Generator:                 genv2.GeneratorReference{APIVersion: "provider.generator.external-secrets.io/v2alpha1", Kind: "VaultDynamicSecret", Name: ref.Name},
				ProviderRef:               ref,
				CredentialsNamespace:      credentials,
				State:                     &apiextensionsv1.JSON{Raw: state},
				GarbageCollectionDeadline: ptr.To(metav1.NewTime(time.Now().Add(-time.Hour))),
			},
		}
	}
	states := []*genv2.GeneratorState{
		// Its own server, the victim's credentials.
		forged("own-server", genv2.ProviderRef{Kind: "VaultDynamicSecret", Name: "evil", Namespace: tenant}, victim, nil),
		// The same with a made-up signature.
		forged("fake-signature", genv2.ProviderRef{Kind: "VaultDynamicSecret", Name: "evil", Namespace: tenant}, victim,
			map[string]string{genv2.AnnotationProvenance: "c2lnbmVkLWJ5LW1l"}),
		// The victim's configuration and credentials, to revoke the victim's token.
		forged("victim-config", genv2.ProviderRef{Kind: "VaultDynamicSecret", Name: "victim-tokens", Namespace: victim}, victim, nil),
	}
	for _, st := range states {
		create(t, st)
	}
	// The states are due at once: a wrong implementation revokes them now.
	victimTokenStaysHome := func() error {
		if slices.Contains(evil.seen(), victimToken) {
			return errors.New("the tenant's server received the victim's token")
		}
		return nil
	}
	consistently(t, 3*time.Second, "no request with the victim's token reaches the tenant's server", victimTokenStaysHome)
	for _, st := range states {
		eventually(t, "eso to disown forged state "+st.Name, func() error {
			var got genv2.GeneratorState
			if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(st), &got); err != nil {
				return err
			}
			c := meta.FindStatusCondition(got.Status.Conditions, genv2.ConditionVerified)
			if c == nil || c.Status != metav1.ConditionFalse || c.Reason != "ProvenanceInvalid" {
				return fmt.Errorf("Verified condition %+v", c)
			}
			if slices.Contains(got.Finalizers, genv2.FinalizerCleanup) {
				return errors.New("eso's finalizer is still on it")
			}
			return nil
		})
		// Deleting a forged state must not make eso revoke anything either.
		if err := env.Client.Delete(context.Background(), st); err != nil {
			t.Fatal(err)
		}
	}
	consistently(t, 2*time.Second, "no request with the victim's token reaches the tenant's server after deletion", victimTokenStaysHome)
	if n := len(evil.seen()); n != 0 {
		t.Errorf("the tenant's server received %d requests; eso has no reason to call it", n)
	}
	if _, err := root.Auth().Token().Lookup(victimLease); err != nil {
		t.Errorf("the victim's token was revoked: %v", err)
	}
}

// createToken issues a Vault token with the default policy, valid for an hour.
func createToken(t *testing.T, root *vaultapi.Client) string {
	t.Helper()
	secret, err := root.Auth().Token().Create(&vaultapi.TokenCreateRequest{Policies: []string{"default"}, TTL: "1h"})
	if err != nil {
		t.Fatal(err)
	}
	return secret.Auth.ClientToken
}
