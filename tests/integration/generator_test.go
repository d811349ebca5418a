package integration

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	genv2 "github.com/eso-dev/eso/apis/generator/v2alpha1"
	genkinds "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/apis/upstreamv1"
	"github.com/eso-dev/eso/app/generation"
	"github.com/eso-dev/eso/providers/vault/vaulttest"
	"github.com/eso-dev/eso/tests/testeso"
)

// generatedSecret is an ExternalSecret whose only entry is a generator.
func generatedSecret(ns, name string, gen esv1.GeneratorRef) *esv1.ExternalSecret {
	return &esv1.ExternalSecret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: esv1.ExternalSecretSpec{
			RefreshInterval: &metav1.Duration{Duration: time.Hour},
			DataFrom:        []esv1.ExternalSecretDataFromRemoteRef{{SourceRef: &esv1.StoreGeneratorSourceRef{GeneratorRef: &gen}}},
		},
	}
}

func passwordConfig(ns, name string, length int) *genkinds.Password {
	return &genkinds.Password{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: genkinds.PasswordSpec{Length: length, Digits: ptr.To(4), Symbols: ptr.To(0)}}
}

// waitGenerated waits until Secret ns/name has key, and returns it.
func waitGenerated(t *testing.T, ns, name, key string, differentFrom string) *corev1.Secret {
	t.Helper()
	var s corev1.Secret
	eventually(t, fmt.Sprintf("Secret %s/%s to hold a new %s", ns, name, key), func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil {
			return err
		}
		if v, ok := s.Data[key]; !ok || string(v) == differentFrom {
			// Say what the ExternalSecret of the same name reports, so a
			// timeout shows why no new value came.
			var es esv1.ExternalSecret
			_ = env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &es)
			return fmt.Errorf("has keys %v; ExternalSecret Ready: %+v", keys(s.Data), readyOf(&es))
		}
		return nil
	})
	return &s
}

// statesOf lists the GeneratorStates of an ExternalSecret.
func statesOf(t *testing.T, ns, es string) []genv2.GeneratorState {
	t.Helper()
	var list genv2.GeneratorStateList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(ns), client.MatchingLabels{genv2.LabelExternalSecret: es}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func stateNamed(states []genv2.GeneratorState, name string) *genv2.GeneratorState {
	for i := range states {
		if states[i].Name == name {
			return &states[i]
		}
	}
	return nil
}

// TestGeneratorRotation: a Password through a Generator. Each sync makes a
// new password and a GeneratorState; the replaced state gets its deadline
// once the new value is in the Secret and is collected after it.
func TestGeneratorRotation(t *testing.T) {
	runEso(t, testConfig())
	ns := env.Namespace(t, "gen-rotation", nil)
	gen := &genv2.Generator{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db-password"}, Spec: genv2.GeneratorSpec{
		ProviderConfig: genv2.ProviderConfig{ProviderRef: genv2.ProviderRef{Kind: "Password", Name: "pw"}},
		StateSpec:      &genv2.StateSpec{GarbageCollectionDeadline: &metav1.Duration{Duration: 2 * time.Second}},
	}}
	create(t, passwordConfig(ns, "pw", 32), gen)
	waitReady(t, gen, metav1.ConditionTrue, ssv2.ReasonValid)

	es := generatedSecret(ns, "app", esv1.GeneratorRef{Kind: "Generator", Name: "db-password"})
	create(t, es)
	first := waitGenerated(t, ns, "app", "password", "")
	if n := len(first.Data["password"]); n != 32 {
		t.Fatalf("password has %d characters, want 32", n)
	}
	held := generation.TargetStates(first)
	if len(held) != 1 {
		t.Fatalf("Secret lists states %v, want one", held)
	}
	eventually(t, "the first state to be committed", func() error {
		st := stateNamed(statesOf(t, ns, "app"), held[0])
		if st == nil || st.Spec.GarbageCollectionDeadline != nil {
			return fmt.Errorf("state %s: %+v", held[0], st)
		}
		if d := st.Annotations[genv2.AnnotationGCDelay]; d != "2s" {
			return fmt.Errorf("state %s records a replacement delay of %q, want the generator's 2s", held[0], d)
		}
		return nil
	})

	annotate(t, es, "force-sync", "1")
	second := waitGenerated(t, ns, "app", "password", string(first.Data["password"]))
	now := generation.TargetStates(second)
	if len(now) != 1 || now[0] == held[0] {
		t.Fatalf("after rotation the Secret lists %v (before %v)", now, held)
	}
	eventually(t, "the replaced state to be collected after its deadline", func() error {
		states := statesOf(t, ns, "app")
		if stateNamed(states, held[0]) != nil {
			return fmt.Errorf("replaced state %s still there", held[0])
		}
		if st := stateNamed(states, now[0]); st == nil || st.Spec.GarbageCollectionDeadline != nil {
			return fmt.Errorf("state in use %s: %+v", now[0], st)
		}
		return nil
	})
}

// TestGeneratorKindsDirectAndStatePolicy: a generator kind referenced
// directly with upstream's apiVersion tracks its state; a Generator with
// statePolicy Ignore records none.
func TestGeneratorKindsDirectAndStatePolicy(t *testing.T) {
	runEso(t, testConfig())
	ns := env.Namespace(t, "gen-kinds", nil)
	create(t,
		&genkinds.UUID{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "id"}},
		passwordConfig(ns, "pw", 16),
		&genv2.Generator{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "untracked"}, Spec: genv2.GeneratorSpec{
			ProviderConfig: genv2.ProviderConfig{ProviderRef: genv2.ProviderRef{Kind: "Password", Name: "pw"}},
			StatePolicy:    genv2.StateIgnore,
		}},
		generatedSecret(ns, "direct", esv1.GeneratorRef{APIVersion: "generators.external-secrets.io/v1alpha1", Kind: "UUID", Name: "id"}),
		generatedSecret(ns, "untracked", esv1.GeneratorRef{Kind: "Generator", Name: "untracked"}),
	)
	s := waitGenerated(t, ns, "direct", "uuid", "")
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).Match(s.Data["uuid"]) {
		t.Fatalf("uuid %q is not a version 4 UUID", s.Data["uuid"])
	}
	if states := statesOf(t, ns, "direct"); len(states) != 1 || states[0].Spec.Generator.APIVersion != generation.KindsAPIVersion {
		t.Fatalf("direct reference: states %+v, want one for %s", states, generation.KindsAPIVersion)
	}
	waitGenerated(t, ns, "untracked", "password", "")
	if states := statesOf(t, ns, "untracked"); len(states) != 0 {
		t.Fatalf("statePolicy Ignore recorded %d states", len(states))
	}
}

// TestClusterGenerator: a ClusterGenerator serves the namespaces its
// conditions allow, and its authenticationScope decides where credentials
// resolve (recorded in the states).
func TestClusterGenerator(t *testing.T) {
	runEso(t, testConfig())
	platform := env.Namespace(t, "gen-platform", nil)
	allowed := env.Namespace(t, "gen-allowed", nil)
	refused := env.Namespace(t, "gen-refused", nil)
	create(t, passwordConfig(platform, "pw", 20))
	scopes := map[ssv2.AuthenticationScope]string{ssv2.ProviderNamespace: platform, ssv2.ManifestNamespace: allowed}
	for scope, want := range scopes {
		cg := &genv2.ClusterGenerator{ObjectMeta: metav1.ObjectMeta{Name: strings.ToLower(string(scope)) + "-" + platform}, Spec: genv2.ClusterGeneratorSpec{
			GeneratorSpec: genv2.GeneratorSpec{ProviderConfig: genv2.ProviderConfig{
				ProviderRef: genv2.ProviderRef{Kind: "Password", Name: "pw", Namespace: platform}}},
			AuthenticationScope: scope,
			Conditions:          []ssv2.ClusterSecretStoreCondition{{Namespaces: []string{allowed}}},
		}}
		create(t, cg)
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), cg) })
		waitReady(t, cg, metav1.ConditionTrue, ssv2.ReasonValid)

		name := strings.ToLower(string(scope))
		ok := generatedSecret(allowed, name, esv1.GeneratorRef{Kind: "ClusterGenerator", Name: cg.Name})
		no := generatedSecret(refused, name, esv1.GeneratorRef{Kind: "ClusterGenerator", Name: cg.Name})
		create(t, ok, no)
		waitGenerated(t, allowed, name, "password", "")
		waitReady(t, no, metav1.ConditionFalse, esv1.ReasonStoreNotAllowed)
		states := statesOf(t, allowed, name)
		if len(states) != 1 || states[0].Spec.CredentialsNamespace != want {
			t.Fatalf("%s: states %+v, want one resolving credentials in %s", scope, states, want)
		}
		if len(statesOf(t, refused, name)) != 0 {
			t.Fatalf("%s: a refused namespace got a state", scope)
		}
	}
}

// errKilled is what every write of a "killed" eso instance returns.
var errKilled = errors.New("eso was killed")

// killSwitch kills an eso instance right after a chosen write reached the API
// server: that write stands, every later one of the instance fails, as if the
// process had died between the two.
type killSwitch struct {
	after  func(client.Object) bool
	killed atomic.Bool
}

type killableClient struct {
	client.Client
	sw *killSwitch
}

func (c killableClient) write(obj client.Object, do func() error) error {
	if c.sw.killed.Load() {
		return errKilled
	}
	if err := do(); err != nil {
		return err
	}
	if c.sw.after(obj) {
		c.sw.killed.Store(true)
		return errKilled
	}
	return nil
}

func (c killableClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	return c.write(obj, func() error { return c.Client.Create(ctx, obj, opts...) })
}

func (c killableClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return c.write(obj, func() error { return c.Client.Update(ctx, obj, opts...) })
}

func (c killableClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return c.write(obj, func() error { return c.Client.Patch(ctx, obj, patch, opts...) })
}

func (c killableClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	return c.write(obj, func() error { return c.Client.Delete(ctx, obj, opts...) })
}

func (c killableClient) Status() client.SubResourceWriter {
	return killableStatus{SubResourceWriter: c.Client.Status(), sw: c.sw}
}

type killableStatus struct {
	client.SubResourceWriter
	sw *killSwitch
}

func (s killableStatus) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	if s.sw.killed.Load() {
		return errKilled
	}
	return s.SubResourceWriter.Update(ctx, obj, opts...)
}

func (s killableStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if s.sw.killed.Load() {
		return errKilled
	}
	return s.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

type killableManager struct {
	ctrl.Manager
	c client.Client
}

func (m killableManager) GetClient() client.Client { return m.c }

// shortPendingGrace lets a test see pending states collected.
var shortPendingGrace = fx.Decorate(func(r *generation.Runner) *generation.Runner {
	r.PendingGrace = 2 * time.Second
	return r
})

// TestGeneratorCrashSafety kills eso in the middle of a rotation and starts a
// new instance: a value that reached the Secret is kept and not generated a
// second time; a value that never reached it is revoked, never used.
func TestGeneratorCrashSafety(t *testing.T) {
	cases := []struct {
		name      string
		wantWrote bool // the Secret was written before the kill
		after     func(client.Object) bool
	}{
		{"killed after writing the Secret", true, func(obj client.Object) bool {
			_, ok := obj.(*corev1.Secret)
			return ok && len(obj.GetAnnotations()[genv2.AnnotationStates]) > 0
		}},
		{"killed after recording the state", false, func(obj client.Object) bool {
			_, ok := obj.(*genv2.GeneratorState)
			return ok
		}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := env.Namespace(t, fmt.Sprintf("gen-crash-%d", i), nil)
			create(t, passwordConfig(ns, "pw", 24))
			sw := &killSwitch{after: tc.after}
			kill := testeso.Start(t, esoIdentity(t), testConfig(), shortPendingGrace, fx.Decorate(func(mgr ctrl.Manager) ctrl.Manager {
				return killableManager{Manager: mgr, c: killableClient{Client: mgr.GetClient(), sw: sw}}
			}))
			t.Cleanup(func() { _ = kill() })
			es := generatedSecret(ns, "app", esv1.GeneratorRef{Kind: "Password", Name: "pw"})
			create(t, es)
			eventually(t, "eso to be killed mid-rotation", func() error {
				if !sw.killed.Load() {
					return errors.New("still running")
				}
				return nil
			})
			if err := kill(); err != nil {
				t.Logf("stopping the killed instance: %v", err)
			}
			var before corev1.Secret
			wrote := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "app"}, &before) == nil
			if wrote != tc.wantWrote {
				t.Fatalf("the Secret was written before the kill: %v, want %v", wrote, tc.wantWrote)
			}
			orphans := statesOf(t, ns, "app")
			if len(orphans) != 1 {
				t.Fatalf("the killed instance left %d states, want 1", len(orphans))
			}

			runEso(t, testConfig(), shortPendingGrace)
			waitReady(t, es, metav1.ConditionTrue, esv1.ReasonSecretSynced)
			var after corev1.Secret
			if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "app"}, &after); err != nil {
				t.Fatal(err)
			}
			held := generation.TargetStates(&after)
			if wrote {
				// The rotation had reached the Secret: nothing generated again.
				if string(after.Data["password"]) != string(before.Data["password"]) || !slices.Equal(held, []string{orphans[0].Name}) {
					t.Fatalf("the value that reached the Secret was replaced after the restart (states %v, before %s)", held, orphans[0].Name)
				}
			} else if len(held) != 1 || held[0] == orphans[0].Name || len(after.Data["password"]) != 24 {
				t.Fatalf("after the restart the Secret lists %v (orphan %s)", held, orphans[0].Name)
			}
			eventually(t, "only the state in use to remain, committed", func() error {
				states := statesOf(t, ns, "app")
				if len(states) != 1 || states[0].Name != held[0] || states[0].Spec.GarbageCollectionDeadline != nil {
					var names []string
					for _, s := range states {
						names = append(names, fmt.Sprintf("%s(deadline %v)", s.Name, s.Spec.GarbageCollectionDeadline))
					}
					return fmt.Errorf("states %v, in use %v", names, held)
				}
				return nil
			})
		})
	}
}

// TestGeneratorGating: a Generator whose configuration is missing is not
// Ready and holds back its ExternalSecrets; creating the configuration makes
// it Ready and they sync without waiting for a refresh.
func TestGeneratorGating(t *testing.T) {
	runEso(t, testConfig())
	ns := env.Namespace(t, "gen-gating", nil)
	gen := &genv2.Generator{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "later"}, Spec: genv2.GeneratorSpec{
		ProviderConfig: genv2.ProviderConfig{ProviderRef: genv2.ProviderRef{Kind: "Password", Name: "pw"}}}}
	create(t, gen)
	waitReady(t, gen, metav1.ConditionFalse, ssv2.ReasonProviderRefNotFound)
	es := generatedSecret(ns, "app", esv1.GeneratorRef{Kind: "Generator", Name: "later"})
	create(t, es)
	waitReady(t, es, metav1.ConditionFalse, esv1.ReasonStoreNotReady)
	if len(statesOf(t, ns, "app")) != 0 {
		t.Fatal("a gated ExternalSecret recorded a state")
	}
	create(t, passwordConfig(ns, "pw", 16))
	waitReady(t, gen, metav1.ConditionTrue, ssv2.ReasonValid)
	waitGenerated(t, ns, "app", "password", "")
}

// TestVaultDynamicSecretRotation: an ExternalSecret whose value is a token
// that Vault issues through a Generator (VaultDynamicSecret, auth/token/create
// against a real dev server). Each rotation issues a new token; the replaced
// one keeps working until its state's deadline, then eso revokes it.
func TestVaultDynamicSecretRotation(t *testing.T) {
	root := vaulttest.Start(t)
	runEso(t, testConfig())
	ns := env.Namespace(t, "gen-vault", nil)
	gen := &genv2.Generator{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app-token"}, Spec: genv2.GeneratorSpec{
		ProviderConfig: genv2.ProviderConfig{ProviderRef: genv2.ProviderRef{Kind: "VaultDynamicSecret", Name: "child-token"}},
		StateSpec:      &genv2.StateSpec{GarbageCollectionDeadline: &metav1.Duration{Duration: 2 * time.Second}},
	}}
	create(t,
		plainSecret(ns, "vault-token", map[string]string{"token": vaulttest.RootToken}),
		&genkinds.VaultDynamicSecret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "child-token"}, Spec: genkinds.VaultDynamicSecretSpec{
			Server: root.Address(),
			Auth:   &provv1.VaultAuth{TokenSecretRef: &provv1.SecretKeySelector{Name: "vault-token", Key: "token"}},
			Path:   "auth/token/create", Method: "POST", ResultType: genkinds.VaultResultAuth,
			Parameters: map[string]apiextensionsv1.JSON{"policies": {Raw: []byte(`["default"]`)}, "ttl": {Raw: []byte(`"1h"`)}},
		}},
		gen,
	)
	waitReady(t, gen, metav1.ConditionTrue, ssv2.ReasonValid)
	es := generatedSecret(ns, "app", esv1.GeneratorRef{Kind: "Generator", Name: "app-token"})
	create(t, es)
	first := waitGenerated(t, ns, "app", "client_token", "")
	works := func(token []byte) bool {
		_, err := root.Auth().Token().Lookup(string(token))
		return err == nil
	}
	if !works(first.Data["client_token"]) {
		t.Fatal("the token in the Secret does not work")
	}

	annotate(t, es, "force-sync", "rotate")
	second := waitGenerated(t, ns, "app", "client_token", string(first.Data["client_token"]))
	if !works(second.Data["client_token"]) {
		t.Fatal("the new token does not work")
	}
	eventually(t, "the replaced token to be revoked after its deadline", func() error {
		if works(first.Data["client_token"]) {
			return errors.New("the replaced token still works")
		}
		return nil
	})
	if !works(second.Data["client_token"]) {
		t.Fatal("the token in use was revoked")
	}
	// The replaced state goes once its revocation is recorded, a moment
	// after the token stops working.
	eventually(t, "only the state in use to be left", func() error {
		if states := statesOf(t, ns, "app"); len(states) != 1 {
			return fmt.Errorf("%d states left, want the one in use", len(states))
		}
		return nil
	})
}

// TestVaultDynamicSecretInUpstreamShape: a VaultDynamicSecret written as
// upstream documents it (the connection under spec.provider, a v1 store's
// Vault block) and referenced with upstream's apiVersion generates against
// a real Vault dev server; a reference naming another namespace is refused
// with what to change; one whose controller class is another eso's is left
// alone (no status), directly and through a Generator.
func TestVaultDynamicSecretInUpstreamShape(t *testing.T) {
	root := vaulttest.Start(t)
	runEso(t, testConfig())
	ns := env.Namespace(t, "gen-vault-upstream", nil)
	upstreamShape := func(name string, tokenNamespace *string, controller string) *genkinds.VaultDynamicSecret {
		return &genkinds.VaultDynamicSecret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: genkinds.VaultDynamicSecretSpec{
			Controller: controller,
			Provider: &upstreamv1.VaultProvider{Server: root.Address(), Auth: &upstreamv1.VaultAuth{
				TokenSecretRef: &upstreamv1.SecretKeySelector{Name: "vault-token", Key: "token", Namespace: tokenNamespace}}},
			Path: "/sys/tools/random/16", Method: "POST",
		}}
	}
	create(t,
		plainSecret(ns, "vault-token", map[string]string{"token": vaulttest.RootToken}),
		upstreamShape("random", ptr.To(ns), ""),
		upstreamShape("elsewhere", ptr.To("kube-system"), ""),
		upstreamShape("other-class", nil, "other"),
		&genv2.Generator{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "via-generator"}, Spec: genv2.GeneratorSpec{
			ProviderConfig: genv2.ProviderConfig{ProviderRef: genv2.ProviderRef{Kind: "VaultDynamicSecret", Name: "other-class"}}}},
	)
	ref := func(name string) esv1.GeneratorRef {
		return esv1.GeneratorRef{APIVersion: "generators.external-secrets.io/v1alpha1", Kind: "VaultDynamicSecret", Name: name}
	}
	otherClass := []*esv1.ExternalSecret{
		generatedSecret(ns, "other-class", ref("other-class")),
		generatedSecret(ns, "via-generator", esv1.GeneratorRef{Kind: "Generator", Name: "via-generator"}),
	}
	for _, es := range otherClass {
		create(t, es)
	}
	create(t, generatedSecret(ns, "random", ref("random")))
	if s := waitGenerated(t, ns, "random", "random_bytes", ""); len(s.Data["random_bytes"]) == 0 {
		t.Fatal("empty random_bytes")
	}

	es := generatedSecret(ns, "elsewhere", ref("elsewhere"))
	create(t, es)
	want := "spec.provider.auth.tokenSecretRef.namespace: a generator reads credentials from " + ns + " only"
	if msg := waitReady(t, es, metav1.ConditionFalse, esv1.ReasonStoreNotAllowed); !strings.Contains(msg, want) {
		t.Errorf("Ready message %q, want it to say %q", msg, want)
	}
	// Created before the two above, which are synced or refused by now.
	for _, es := range otherClass {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(es), es); err != nil {
			t.Fatal(err)
		}
		if len(es.Status.Conditions) > 0 || len(statesOf(t, ns, es.Name)) > 0 {
			t.Errorf("%s uses another class's generator: status %+v, want it left alone", es.Name, es.Status.Conditions)
		}
	}
}
