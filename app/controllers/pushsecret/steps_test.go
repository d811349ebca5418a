package pushsecret

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/secrettemplate"
	"github.com/eso-dev/eso/app/stores"
	"github.com/eso-dev/eso/providers/plugin"
)

// These are the table tests of a PushSecret sync's steps (steps.go), one
// per step; tests/integration runs whole syncs against a real API server.

var ctx = context.Background()

func TestReadSourcesStep(t *testing.T) {
	gold := map[string]string{"tier": "gold"}
	bySelector := func(ps *esv1alpha1.PushSecret) {
		ps.Spec.Selector.Secret = &esv1alpha1.PushSecretSecret{Selector: &metav1.LabelSelector{MatchLabels: gold}}
	}
	huge := sourceSecret("src", map[string]string{"pw": strings.Repeat("x", secrettemplate.MaxReadBytes)})
	for name, tc := range map[string]struct {
		objs      []client.Object
		mutate    func(*esv1alpha1.PushSecret)
		wantNames []string
		wantErr   error
	}{
		"the Secret it names":              {objs: []client.Object{sourceSecret("src", map[string]string{"pw": "x"})}, wantNames: []string{"src"}},
		"a named Secret that is not there": {wantErr: errSourceGone},
		"the Secrets a selector picks, by name": {
			objs: []client.Object{
				sourceSecret("b", nil, func(s *corev1.Secret) { s.Labels = gold }),
				sourceSecret("a", nil, func(s *corev1.Secret) { s.Labels = gold }),
				sourceSecret("c", nil),
			},
			mutate: bySelector, wantNames: []string{"a", "b"},
		},
		"a selector picking more than the bound": {objs: manySecrets(maxSourceSecrets+1, gold), mutate: bySelector, wantErr: errBadEntry},
		"a selector picking exactly the bound":   {objs: manySecrets(maxSourceSecrets, gold), mutate: bySelector},
		"a Secret larger than the sync may read": {objs: []client.Object{huge}, wantErr: secrettemplate.ErrReadBudget},
		"a generated value and no generators here": {mutate: func(ps *esv1alpha1.PushSecret) {
			ps.Spec.Selector = esv1alpha1.PushSecretSelector{GeneratorRef: &esv1.GeneratorRef{Kind: "Password", Name: "pw"}}
		}, wantErr: errBadEntry},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, tc.objs...)
			ps := pushSecret()
			if tc.mutate != nil {
				tc.mutate(ps)
			}
			sc := h.scope(ps)
			end, err := h.r.readSources(ctx, sc)
			if end != next || !errors.Is(err, tc.wantErr) {
				t.Fatalf("readSources = %v, %v; want next, %v", end, err, tc.wantErr)
			}
			if tc.wantNames != nil && !slices.Equal(names(sc.sources), tc.wantNames) {
				t.Errorf("sources %v, want %v", names(sc.sources), tc.wantNames)
			}
		})
	}
}

func TestFindStoresStep(t *testing.T) {
	gold := map[string]string{"tier": "gold"}
	otherClass := func(s *ssv2.SecretStore) { s.Spec.Controller = "blue" }
	for name, tc := range map[string]struct {
		objs      []client.Object
		refs      []esv1alpha1.PushSecretStoreRef
		wantEnd   end
		wantKeys  []string
		wantErrOn map[string]error // store key → its error
		wantErr   error
	}{
		"a named store": {
			objs: []client.Object{fakeConfig("team-a"), secretStore("vault", nil)},
			refs: []esv1alpha1.PushSecretStoreRef{{Name: "vault", Kind: stores.KindSecretStore}}, wantKeys: []string{"SecretStore/vault"},
		},
		"a named store that is missing keeps its error": {
			refs:     []esv1alpha1.PushSecretStoreRef{{Name: "vault", Kind: stores.KindSecretStore}},
			wantKeys: []string{"SecretStore/vault"}, wantErrOn: map[string]error{"SecretStore/vault": stores.ErrStoreNotFound},
		},
		"a store that failed validation keeps its error": {
			objs: []client.Object{fakeConfig("team-a"), secretStore("vault", nil, func(s *ssv2.SecretStore) {
				s.Status.Conditions = []metav1.Condition{{Type: ssv2.ConditionReady, Status: metav1.ConditionFalse, Reason: "InvalidProviderConfig", ObservedGeneration: 1}}
			})},
			refs:     []esv1alpha1.PushSecretStoreRef{{Name: "vault", Kind: stores.KindSecretStore}},
			wantKeys: []string{"SecretStore/vault"}, wantErrOn: map[string]error{"SecretStore/vault": stores.ErrStoreNotReady},
		},
		"only another controller class's stores": {
			objs: []client.Object{fakeConfig("team-a"), secretStore("vault", nil, otherClass)},
			refs: []esv1alpha1.PushSecretStoreRef{{Name: "vault", Kind: stores.KindSecretStore}}, wantEnd: endQuietly,
		},
		"stores a label selector picks, leaving other classes out": {
			objs:     []client.Object{fakeConfig("team-a"), secretStore("a", gold), secretStore("b", gold), secretStore("c", nil), secretStore("d", gold, otherClass)},
			refs:     []esv1alpha1.PushSecretStoreRef{{LabelSelector: &metav1.LabelSelector{MatchLabels: gold}, Kind: stores.KindSecretStore}},
			wantKeys: []string{"SecretStore/a", "SecretStore/b"},
		},
		"one store named twice is one store": {
			objs: []client.Object{fakeConfig("team-a"), secretStore("vault", gold)},
			refs: []esv1alpha1.PushSecretStoreRef{{Name: "vault", Kind: stores.KindSecretStore},
				{LabelSelector: &metav1.LabelSelector{MatchLabels: gold}, Kind: stores.KindSecretStore}},
			wantKeys: []string{"SecretStore/vault"},
		},
		"a name beside a labelSelector: the labels select (upstream's rule)": {
			objs:     []client.Object{fakeConfig("team-a"), secretStore("vault", nil), secretStore("a", gold)},
			refs:     []esv1alpha1.PushSecretStoreRef{{Name: "vault", LabelSelector: &metav1.LabelSelector{MatchLabels: gold}, Kind: stores.KindSecretStore}},
			wantKeys: []string{"SecretStore/a"},
		},
		"a label selector matching no store ends quietly": {
			objs:    []client.Object{fakeConfig("team-a"), secretStore("vault", nil)},
			refs:    []esv1alpha1.PushSecretStoreRef{{LabelSelector: &metav1.LabelSelector{MatchLabels: gold}, Kind: stores.KindSecretStore}},
			wantEnd: endQuietly,
		},
		"more stores than the bound": {
			objs:    append([]client.Object{fakeConfig("team-a")}, manyStores(maxStores+1, gold)...),
			refs:    []esv1alpha1.PushSecretStoreRef{{LabelSelector: &metav1.LabelSelector{MatchLabels: gold}, Kind: stores.KindSecretStore}},
			wantErr: errBadEntry,
		},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, tc.objs...)
			sc := h.scope(pushSecret(func(ps *esv1alpha1.PushSecret) { ps.Spec.SecretStoreRefs = tc.refs }))
			end, err := h.r.findStores(ctx, sc)
			if end != tc.wantEnd || !errors.Is(err, tc.wantErr) {
				t.Fatalf("findStores = %v, %v; want %v, %v", end, err, tc.wantEnd, tc.wantErr)
			}
			if got := storeKeys(sc.stores); !slices.Equal(got, tc.wantKeys) {
				t.Errorf("stores %v, want %v", got, tc.wantKeys)
			}
			for _, s := range sc.stores {
				want := tc.wantErrOn[s.target.key()]
				if !errors.Is(s.err, want) || (s.err == nil) != (want == nil) {
					t.Errorf("store %s: error %v, want %v", s.target.key(), s.err, want)
				}
			}
		})
	}
}

func TestCheckDataToNamesStep(t *testing.T) {
	gold := &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}
	for name, tc := range map[string]struct {
		refs     []esv1alpha1.PushSecretStoreRef
		storeRef *esv1alpha1.PushSecretStoreRef
		wantErr  error
	}{
		"a store secretStoreRefs names": {
			refs: []esv1alpha1.PushSecretStoreRef{{Name: "vault", Kind: stores.KindSecretStore}}, storeRef: &esv1alpha1.PushSecretStoreRef{Name: "vault"},
		},
		"a store secretStoreRefs does not name": {
			refs: []esv1alpha1.PushSecretStoreRef{{Name: "vault", Kind: stores.KindSecretStore}}, storeRef: &esv1alpha1.PushSecretStoreRef{Name: "aws"},
			wantErr: errBadEntry,
		},
		"a store of that name but another kind": {
			refs:     []esv1alpha1.PushSecretStoreRef{{Name: "vault", Kind: stores.KindSecretStore}},
			storeRef: &esv1alpha1.PushSecretStoreRef{Name: "vault", Kind: stores.KindClusterSecretStore}, wantErr: errBadEntry,
		},
		"a name when secretStoreRefs only selects by labels": {
			refs: []esv1alpha1.PushSecretStoreRef{{LabelSelector: gold}}, storeRef: &esv1alpha1.PushSecretStoreRef{Name: "vault"},
			wantErr: errBadEntry,
		},
		"a name a labelled reference carries too": {
			refs: []esv1alpha1.PushSecretStoreRef{{Name: "vault", LabelSelector: gold}}, storeRef: &esv1alpha1.PushSecretStoreRef{Name: "vault"},
		},
		"a labelSelector is checked against the stores found, later": {
			refs: []esv1alpha1.PushSecretStoreRef{{Name: "vault"}}, storeRef: &esv1alpha1.PushSecretStoreRef{LabelSelector: gold},
		},
	} {
		t.Run(name, func(t *testing.T) {
			sc := (&harness{}).scope(pushSecret(func(ps *esv1alpha1.PushSecret) {
				ps.Spec.SecretStoreRefs = tc.refs
				ps.Spec.DataTo = []esv1alpha1.PushSecretDataTo{{StoreRef: tc.storeRef}}
			}))
			if end, err := checkDataToNames(ctx, sc); end != next || !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Errorf("checkDataToNames = %v, %v; want next, %v", end, err, tc.wantErr)
			}
		})
	}
}

func TestCheckDataToSelectorsStep(t *testing.T) {
	selects := func(labels map[string]string) *esv1alpha1.PushSecretStoreRef {
		return &esv1alpha1.PushSecretStoreRef{LabelSelector: &metav1.LabelSelector{MatchLabels: labels}}
	}
	staging := &pushStore{target: target{Kind: stores.KindSecretStore, Name: "a", Labels: map[string]string{"env": "staging"}}}
	for name, tc := range map[string]struct {
		storeRef *esv1alpha1.PushSecretStoreRef
		wantErr  error
	}{
		"a selector matching a store found": {storeRef: selects(map[string]string{"env": "staging"})},
		"a selector matching none":          {storeRef: selects(map[string]string{"env": "production"}), wantErr: errBadEntry},
		"a selector of another kind": {
			storeRef: &esv1alpha1.PushSecretStoreRef{Kind: stores.KindClusterSecretStore, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "staging"}}},
			wantErr:  errBadEntry,
		},
		"a name is checked before, against the spec": {storeRef: &esv1alpha1.PushSecretStoreRef{Name: "elsewhere", LabelSelector: &metav1.LabelSelector{}}},
	} {
		t.Run(name, func(t *testing.T) {
			sc := (&harness{}).scope(pushSecret(func(ps *esv1alpha1.PushSecret) {
				ps.Spec.DataTo = []esv1alpha1.PushSecretDataTo{{StoreRef: tc.storeRef}}
			}))
			sc.stores = []*pushStore{staging}
			if end, err := checkDataToSelectors(ctx, sc); end != next || !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Errorf("checkDataToSelectors = %v, %v; want next, %v", end, err, tc.wantErr)
			}
		})
	}
}

func manyStores(n int, labels map[string]string) []client.Object {
	var out []client.Object
	for i := range n {
		out = append(out, secretStore(fmt.Sprintf("s-%03d", i), labels))
	}
	return out
}

func TestReadTemplateSourcesStep(t *testing.T) {
	withTemplate := func(ps *esv1alpha1.PushSecret) {
		ps.Spec.Template = &esv1.ExternalSecretTemplate{TemplateFrom: []esv1.TemplateFrom{{ConfigMap: &esv1.TemplateRef{Name: "tpl",
			Items: []esv1.TemplateRefItem{{Key: "greeting"}}}}}}
	}
	tpl := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "tpl", ResourceVersion: "3"}, Data: map[string]string{"greeting": "hi {{ .pw }}"}}
	for name, tc := range map[string]struct {
		objs         []client.Object
		mutate       func(*esv1alpha1.PushSecret)
		wantVersions int
		wantErr      bool
	}{
		"no template reads nothing":         {},
		"a template's ConfigMap":            {objs: []client.Object{tpl}, mutate: withTemplate, wantVersions: 1},
		"a template's ConfigMap is missing": {mutate: withTemplate, wantErr: true},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, tc.objs...)
			ps := pushSecret()
			if tc.mutate != nil {
				tc.mutate(ps)
			}
			sc := h.scope(ps)
			end, err := h.r.readTemplateSources(ctx, sc)
			if end != next || (err != nil) != tc.wantErr {
				t.Fatalf("readTemplateSources = %v, %v; want an error %v", end, err, tc.wantErr)
			}
			if len(sc.tplSources.Versions) != tc.wantVersions {
				t.Errorf("versions %v, want %d", sc.tplSources.Versions, tc.wantVersions)
			}
		})
	}
}

func TestCheckDueStep(t *testing.T) {
	// syncedAt marks the PushSecret as synced at, from what stamp says.
	syncedAt := func(at time.Time, stamp string, interval time.Duration) func(*esv1alpha1.PushSecret) {
		return func(ps *esv1alpha1.PushSecret) {
			ps.Spec.RefreshInterval = &metav1.Duration{Duration: interval}
			ps.Status.SyncedResourceVersion = stamp
			ps.Status.RefreshTime = metav1.NewTime(at)
			ps.Status.Conditions = []metav1.Condition{{Type: esv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: esv1alpha1.ReasonSynced, ObservedGeneration: 1}}
		}
	}
	stamp := versionStamp(pushSecret(), nil, secrettemplate.Sources{}, nil)
	for name, tc := range map[string]struct {
		mutate    func(*esv1alpha1.PushSecret)
		checkedAt time.Time
		wantEnd   end
		wantWait  time.Duration
	}{
		"never synced":                     {wantEnd: next},
		"synced, refresh not due":          {mutate: syncedAt(t0.Add(-10*time.Minute), stamp, time.Hour), wantEnd: endUntil, wantWait: 50 * time.Minute},
		"synced, refresh due":              {mutate: syncedAt(t0.Add(-2*time.Hour), stamp, time.Hour), wantEnd: next},
		"synced, no refresh: only changes": {mutate: syncedAt(t0.Add(-2*time.Hour), stamp, 0), wantEnd: endUntil, wantWait: 0},
		"a source or the spec changed":     {mutate: syncedAt(t0.Add(-time.Minute), "1-other", time.Hour), wantEnd: next},
		"this process checked since":       {mutate: syncedAt(t0.Add(-2*time.Hour), stamp, time.Hour), checkedAt: t0.Add(-30 * time.Minute), wantEnd: endUntil, wantWait: 30 * time.Minute},
		"pushed a moment ago: paced":       {checkedAt: t0.Add(-300 * time.Millisecond), wantEnd: endUntil, wantWait: 700 * time.Millisecond},
		"pushed longer ago than the pace":  {checkedAt: t0.Add(-2 * time.Second), wantEnd: next},
		"not Ready for this generation":    {mutate: func(ps *esv1alpha1.PushSecret) { syncedAt(t0, stamp, time.Hour)(ps); ps.Generation = 2 }, wantEnd: next},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			ps := pushSecret()
			if tc.mutate != nil {
				tc.mutate(ps)
			}
			if !tc.checkedAt.IsZero() {
				h.r.checked.Store(client.ObjectKeyFromObject(ps), tc.checkedAt)
			}
			sc := h.scope(ps)
			end, err := h.r.checkDue(ctx, sc)
			if err != nil || end != tc.wantEnd || sc.wait != tc.wantWait {
				t.Errorf("checkDue = %v, %v, wait %v; want %v, wait %v", end, err, sc.wait, tc.wantEnd, tc.wantWait)
			}
			if sc.stamp == "" {
				t.Error("no version stamp")
			}
		})
	}
}

func TestRenderStep(t *testing.T) {
	for name, tc := range map[string]struct {
		sources []corev1.Secret
		tpl     *esv1.ExternalSecretTemplate
		want    map[string]string
		wantErr error
	}{
		"the Secret's data": {sources: []corev1.Secret{*sourceSecret("src", map[string]string{"pw": "x"})}, want: map[string]string{"pw": "x"}},
		"the template's keys over the Secret's own": {
			sources: []corev1.Secret{*sourceSecret("src", map[string]string{"pw": "x", "user": "u"})},
			tpl:     &esv1.ExternalSecretTemplate{Data: map[string]string{"pw": "{{ .pw }}!", "dsn": "{{ .user }}:{{ .pw }}"}},
			want:    map[string]string{"pw": "x!", "user": "u", "dsn": "u:x"},
		},
		"a key in two selected Secrets": {
			sources: []corev1.Secret{*sourceSecret("a", map[string]string{"pw": "x"}), *sourceSecret("b", map[string]string{"pw": "y"})},
			wantErr: errBadEntry,
		},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			sc := h.scope(pushSecret(func(ps *esv1alpha1.PushSecret) { ps.Spec.Template = tc.tpl }))
			sc.sources = tc.sources
			end, err := h.r.render(ctx, sc)
			if end != next || !errors.Is(err, tc.wantErr) {
				t.Fatalf("render = %v, %v; want next, %v", end, err, tc.wantErr)
			}
			if tc.want == nil {
				return
			}
			got := map[string]string{}
			for k, v := range sc.data {
				got[k] = string(v)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("data %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("data %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// TestRenderRefusesLoops: a source an ExternalSecret writes from a store
// is not pushed back to that store; stores over other configurations
// still are.
func TestRenderRefusesLoops(t *testing.T) {
	es := &esv1.ExternalSecret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "reader"},
		Spec: esv1.ExternalSecretSpec{SecretStoreRef: &esv1.SecretStoreRef{Name: "vault", Kind: stores.KindSecretStore},
			Data: []esv1.ExternalSecretData{{SecretKey: "pw", RemoteRef: esv1.ExternalSecretDataRemoteRef{Key: "db"}}}}}
	otherConfig := fakeConfig("team-a")
	otherConfig.Name, otherConfig.UID = "cfg2", "cfg2-uid"
	h := newHarness(t, fakeConfig("team-a"), otherConfig, secretStore("vault", nil), es,
		secretStore("other", nil, func(s *ssv2.SecretStore) { s.Spec.ProviderConfig.ProviderRef.Name = "cfg2" }),
		sourceSecret("src", map[string]string{"pw": "x"}, func(s *corev1.Secret) {
			s.Labels = map[string]string{esv1.LabelManaged: esv1.LabelManagedValue}
			s.Annotations = map[string]string{esv1.AnnotationManagedBy: "reader"}
		}))
	sc := h.scope(pushSecret(func(ps *esv1alpha1.PushSecret) {
		ps.Spec.SecretStoreRefs = []esv1alpha1.PushSecretStoreRef{{Name: "vault", Kind: stores.KindSecretStore}, {Name: "other", Kind: stores.KindSecretStore}}
	}))
	h.run(t, sc, "render")
	for _, s := range sc.stores {
		if looped := errors.Is(s.err, errLoop); looped != (s.target.Name == "vault") {
			t.Errorf("store %s: error %v", s.target.key(), s.err)
		}
	}
}

// TestRenderLoopCheckOnUnreadableStores: a source whose ExternalSecret
// reads from a store that does not exist is pushed (nothing is read there);
// one whose store cannot be read is pushed nowhere, since whether the push
// would feed a loop is unknown.
func TestRenderLoopCheckOnUnreadableStores(t *testing.T) {
	for name, tc := range map[string]struct {
		ref        esv1.SecretStoreRef
		wantPushed bool
	}{
		"a store that does not exist": {ref: esv1.SecretStoreRef{Name: "gone", Kind: stores.KindSecretStore}, wantPushed: true},
		"a store that cannot be read": {ref: esv1.SecretStoreRef{Name: "vault", Kind: stores.KindSecretStore, APIVersion: "example.com/v9"}},
	} {
		t.Run(name, func(t *testing.T) {
			es := &esv1.ExternalSecret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "reader"},
				Spec: esv1.ExternalSecretSpec{SecretStoreRef: &tc.ref,
					Data: []esv1.ExternalSecretData{{SecretKey: "pw", RemoteRef: esv1.ExternalSecretDataRemoteRef{Key: "db"}}}}}
			h := newHarness(t, fakeConfig("team-a"), secretStore("vault", nil), es,
				sourceSecret("src", map[string]string{"pw": "x"}, func(s *corev1.Secret) {
					s.Labels = map[string]string{esv1.LabelManaged: esv1.LabelManagedValue}
					s.Annotations = map[string]string{esv1.AnnotationManagedBy: "reader"}
				}))
			sc := h.scope(pushSecret(func(ps *esv1alpha1.PushSecret) {
				ps.Spec.SecretStoreRefs = []esv1alpha1.PushSecretStoreRef{{Name: "vault", Kind: stores.KindSecretStore}}
			}))
			h.run(t, sc, "render")
			if pushed := sc.stores[0].err == nil; pushed != tc.wantPushed {
				t.Errorf("pushed %v, want %v (error %v)", pushed, tc.wantPushed, sc.stores[0].err)
			}
		})
	}
}

func TestPlanEntriesStep(t *testing.T) {
	usable := &pushStore{target: target{Kind: stores.KindSecretStore, Name: "vault"},
		store: &stores.Store{Kind: stores.KindSecretStore, Name: "vault", Spec: &ssv2.SecretStoreSpec{}}}
	broken := &pushStore{target: target{Kind: stores.KindSecretStore, Name: "down"}, err: stores.ErrStoreNotReady}
	refusing := &pushStore{target: target{Kind: stores.KindSecretStore, Name: "strict"},
		store: &stores.Store{Kind: stores.KindSecretStore, Name: "strict", Spec: &ssv2.SecretStoreSpec{PushPolicy: &ssv2.PushPolicy{Adoption: ssv2.Refused}}}}
	second := &pushStore{target: target{Kind: stores.KindSecretStore, Name: "second"},
		store: &stores.Store{Kind: stores.KindSecretStore, Name: "second", Spec: &ssv2.SecretStoreSpec{}}}
	old := dataEntry("pw", "old/pw", "")
	for name, tc := range map[string]struct {
		stores    []*pushStore
		mutate    func(*esv1alpha1.PushSecret)
		wantHolds map[string][]string
		wantFails []string
		wantErr   error
	}{
		"a usable store is planned": {stores: []*pushStore{usable}, wantHolds: map[string][]string{"SecretStore/vault": {"app/pw"}}},
		"a store that cannot be used keeps what it holds": {
			stores: []*pushStore{usable, broken}, mutate: func(ps *esv1alpha1.PushSecret) { held(ps, "SecretStore/down", old) },
			wantHolds: map[string][]string{"SecretStore/vault": {"app/pw"}, "SecretStore/down": {"old/pw"}}, wantFails: []string{"SecretStore/down"},
		},
		"a store whose policy refuses the push": {
			stores: []*pushStore{refusing}, mutate: func(ps *esv1alpha1.PushSecret) { ps.Spec.AdoptionPolicy = esv1alpha1.AdoptionPolicyAdopt },
			wantHolds: map[string][]string{"SecretStore/strict": nil}, wantFails: []string{"SecretStore/strict"},
		},
		"an entry naming a key the source lacks": {
			stores: []*pushStore{usable}, mutate: func(ps *esv1alpha1.PushSecret) {
				ps.Spec.Data = []esv1alpha1.PushSecretData{dataEntry("nope", "x", "")}
			},
			wantHolds: map[string][]string{"SecretStore/vault": nil}, wantFails: []string{"SecretStore/vault"},
		},
		"a key the source lacks does not hold the others back": {
			stores: []*pushStore{usable, second}, mutate: func(ps *esv1alpha1.PushSecret) {
				ps.Spec.Data = append(ps.Spec.Data, dataEntry("nope", "x", ""))
			},
			wantHolds: map[string][]string{"SecretStore/vault": {"app/pw"}, "SecretStore/second": {"app/pw"}},
			wantFails: []string{"SecretStore/vault", "SecretStore/second"},
		},
		"what an entry whose key went missing pushed stays held": {
			stores: []*pushStore{usable}, mutate: func(ps *esv1alpha1.PushSecret) {
				ps.Spec.Data = append(ps.Spec.Data, dataEntry("nope", "x", ""))
				held(ps, "SecretStore/vault", dataEntry("nope", "x", ""))
			},
			wantHolds: map[string][]string{"SecretStore/vault": {"app/pw", "x"}}, wantFails: []string{"SecretStore/vault"},
		},
		"more entries than the bound over all stores": {
			stores: []*pushStore{usable, second}, mutate: func(ps *esv1alpha1.PushSecret) {
				ps.Spec.Data = nil
				for i := range maxEntries/2 + 1 {
					ps.Spec.Data = append(ps.Spec.Data, dataEntry("pw", fmt.Sprintf("k/%04d", i), ""))
				}
			},
			wantErr: errBadEntry,
		},
	} {
		t.Run(name, func(t *testing.T) {
			ps := pushSecret()
			if tc.mutate != nil {
				tc.mutate(ps)
			}
			sc := (&harness{}).scope(ps)
			sc.stores, sc.data = tc.stores, map[string][]byte{"pw": []byte("x")}
			end, err := planEntries(ctx, sc)
			if end != next || !errors.Is(err, tc.wantErr) {
				t.Fatalf("planEntries = %v, %v; want next, %v", end, err, tc.wantErr)
			}
			if tc.wantErr != nil {
				return
			}
			got := heldIDs(sc.holds)
			for k, want := range tc.wantHolds {
				if !slices.Equal(got[k], want) {
					t.Errorf("%s holds %v, want %v", k, got[k], want)
				}
			}
			if len(sc.problems) != len(tc.wantFails) {
				t.Fatalf("problems %v, want failures of %v", sc.problems, tc.wantFails)
			}
			for i, key := range tc.wantFails {
				if !strings.HasPrefix(sc.problems[i], key+": ") {
					t.Errorf("problem %q, want one of %s", sc.problems[i], key)
				}
			}
		})
	}
}

func TestDeleteDroppedStep(t *testing.T) {
	old, kept := dataEntry("old", "app/old", ""), dataEntry("pw", "app/pw", "")
	for name, tc := range map[string]struct {
		policy      esv1alpha1.DeletionPolicy
		refuse      error
		wantDeletes []string
		wantFailed  int
	}{
		"Retain deletes nothing":                     {policy: esv1alpha1.DeletionPolicyNone},
		"Delete deletes what left the spec":          {policy: esv1alpha1.DeletionPolicyDelete, wantDeletes: []string{"app/old"}},
		"a deletion that fails is kept to try again": {policy: esv1alpha1.DeletionPolicyDelete, refuse: plugin.ErrAuthFailed, wantFailed: 1},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, fakeConfig("team-a"), secretStore("vault", nil), sourceSecret("src", map[string]string{"pw": "x"}))
			h.backend.secrets["app/old"] = []byte("o")
			if tc.refuse != nil {
				h.backend.refuse["app/old"] = tc.refuse
			}
			ps := pushSecret(func(ps *esv1alpha1.PushSecret) {
				ps.Spec.DeletionPolicy = tc.policy
				held(ps, "SecretStore/vault", old, kept)
			})
			sc := h.scope(ps)
			h.run(t, sc, "planEntries")
			end, err := h.r.deleteDropped(ctx, sc)
			if end != next || err != nil {
				t.Fatalf("deleteDropped = %v, %v", end, err)
			}
			if !slices.Equal(h.backend.deletes, tc.wantDeletes) {
				t.Errorf("deleted %v, want %v", h.backend.deletes, tc.wantDeletes)
			}
			if len(sc.failedDeletions) != tc.wantFailed || (tc.wantFailed > 0) != (len(sc.errs) > 0) {
				t.Errorf("failed deletions %v, errors %v; want %d", sc.failedDeletions, sc.errs, tc.wantFailed)
			}
		})
	}
}

func TestPushEntriesStep(t *testing.T) {
	for name, tc := range map[string]struct {
		mutate     func(*esv1alpha1.PushSecret)
		setup      func(*memBackend)
		wantPushes []string
		wantHolds  []string
		wantErr    error
	}{
		"a new remote secret":                 {wantPushes: []string{"app/pw"}, wantHolds: []string{"app/pw"}},
		"a remote secret eso did not create":  {setup: func(b *memBackend) { b.foreign["app/pw"] = true }, wantErr: errNotOwned},
		"adopted when the PushSecret says so": {mutate: func(ps *esv1alpha1.PushSecret) { ps.Spec.AdoptionPolicy = esv1alpha1.AdoptionPolicyAdopt }, setup: func(b *memBackend) { b.foreign["app/pw"] = true }, wantPushes: []string{"app/pw"}, wantHolds: []string{"app/pw"}},
		"IfNotExists leaves one that exists":  {mutate: func(ps *esv1alpha1.PushSecret) { ps.Spec.UpdatePolicy = esv1alpha1.UpdatePolicyIfNotExists }, setup: func(b *memBackend) { b.secrets["app/pw"] = []byte("theirs") }},
		"a key the source lacks: the rest is pushed, its record kept": {
			mutate: func(ps *esv1alpha1.PushSecret) {
				ps.Spec.Data = append(ps.Spec.Data, dataEntry("nope", "x", ""))
				held(ps, "SecretStore/vault", dataEntry("nope", "x", ""))
			},
			wantPushes: []string{"app/pw"}, wantHolds: []string{"app/pw", "x"}, wantErr: errBadEntry,
		},
		"a push that fails keeps what was held": {mutate: func(ps *esv1alpha1.PushSecret) { held(ps, "SecretStore/vault", dataEntry("pw", "app/pw", "")) }, setup: func(b *memBackend) { b.refuse["app/pw"] = plugin.ErrUnavailable }, wantHolds: []string{"app/pw"}, wantErr: plugin.ErrUnavailable},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, fakeConfig("team-a"), secretStore("vault", nil), sourceSecret("src", map[string]string{"pw": "x"}))
			if tc.setup != nil {
				tc.setup(h.backend)
			}
			ps := pushSecret()
			if tc.mutate != nil {
				tc.mutate(ps)
			}
			sc := h.scope(ps)
			h.run(t, sc, "deleteDropped")
			end, err := h.r.pushEntries(ctx, sc)
			if end != next || err != nil {
				t.Fatalf("pushEntries = %v, %v", end, err)
			}
			if !slices.Equal(h.backend.pushes, tc.wantPushes) {
				t.Errorf("pushed %v, want %v", h.backend.pushes, tc.wantPushes)
			}
			if got := heldIDs(sc.holds)["SecretStore/vault"]; !slices.Equal(got, tc.wantHolds) {
				t.Errorf("the store holds %v, want %v", got, tc.wantHolds)
			}
			if err := errors.Join(sc.errs...); !errors.Is(err, tc.wantErr) {
				t.Errorf("failures %v, want %v", err, tc.wantErr)
			}
			if tc.wantPushes != nil {
				if v, _ := h.backend.value("app/pw"); v != "x" {
					t.Errorf("remote value %q", v)
				}
			}
		})
	}
}

// TestSyncOutcomes runs whole syncs over the harness: how the steps' end
// becomes the status, the events and the requeue.
func TestSyncOutcomes(t *testing.T) {
	ready := func(ps *esv1alpha1.PushSecret) *metav1.Condition {
		for i, c := range ps.Status.Conditions {
			if c.Type == esv1alpha1.ConditionReady {
				return &ps.Status.Conditions[i]
			}
		}
		return nil
	}
	for name, tc := range map[string]struct {
		objs        []client.Object
		mutate      func(*esv1alpha1.PushSecret)
		setup       func(*memBackend)
		wantReason  string // "" when no status is written
		wantRequeue time.Duration
		wantErr     bool
		wantRemote  map[string]string
	}{
		"pushed": {
			objs:       []client.Object{fakeConfig("team-a"), secretStore("vault", nil), sourceSecret("src", map[string]string{"pw": "x"})},
			wantReason: esv1alpha1.ReasonSynced, wantRequeue: time.Hour, wantRemote: map[string]string{"app/pw": "x"},
		},
		"a store refusing the push is reported, and waits for a change": {
			objs:       []client.Object{fakeConfig("team-a"), secretStore("vault", nil), sourceSecret("src", map[string]string{"pw": "x"})},
			setup:      func(b *memBackend) { b.foreign["app/pw"] = true },
			wantReason: esv1alpha1.ReasonNotOwned, wantRequeue: time.Hour,
		},
		"a store unreachable is reported and retried with backoff": {
			objs:       []client.Object{fakeConfig("team-a"), secretStore("vault", nil), sourceSecret("src", map[string]string{"pw": "x"})},
			setup:      func(b *memBackend) { b.refuse["app/pw"] = plugin.ErrUnavailable },
			wantReason: esv1alpha1.ReasonErrored, wantErr: true,
		},
		"the source is gone": {
			objs:       []client.Object{fakeConfig("team-a"), secretStore("vault", nil)},
			wantReason: esv1alpha1.ReasonErrored,
		},
		"the source is gone and what was pushed is deleted": {
			objs: []client.Object{fakeConfig("team-a"), secretStore("vault", nil)},
			mutate: func(ps *esv1alpha1.PushSecret) {
				ps.Spec.DeletionPolicy = esv1alpha1.DeletionPolicyDelete
				held(ps, "SecretStore/vault", dataEntry("pw", "app/pw", ""))
			},
			setup:      func(b *memBackend) { b.secrets["app/pw"] = []byte("x") },
			wantReason: esv1alpha1.ReasonSourceDeleted, wantRemote: map[string]string{},
		},
		"only another class's stores: nothing written": {
			objs: []client.Object{fakeConfig("team-a"), sourceSecret("src", map[string]string{"pw": "x"}),
				secretStore("vault", nil, func(s *ssv2.SecretStore) { s.Spec.Controller = "blue" })},
		},
		"a key the source lacks: the rest is pushed, and it waits for the key": {
			objs: []client.Object{fakeConfig("team-a"), secretStore("vault", nil), sourceSecret("src", map[string]string{"pw": "x"})},
			mutate: func(ps *esv1alpha1.PushSecret) {
				ps.Spec.Data = append(ps.Spec.Data, dataEntry("nope", "x", ""))
			},
			wantReason: esv1alpha1.ReasonErrored, wantRequeue: time.Hour, wantRemote: map[string]string{"app/pw": "x"},
		},
		"no store selected: no condition, nothing pushed": {
			objs: []client.Object{fakeConfig("team-a"), secretStore("vault", nil), sourceSecret("src", map[string]string{"pw": "x"})},
			mutate: func(ps *esv1alpha1.PushSecret) {
				ps.Spec.SecretStoreRefs = []esv1alpha1.PushSecretStoreRef{{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}}}
			},
			wantRemote: map[string]string{},
		},
		"a dataTo naming a store secretStoreRefs does not name": {
			objs: []client.Object{fakeConfig("team-a"), secretStore("vault", nil), sourceSecret("src", map[string]string{"pw": "x"})},
			mutate: func(ps *esv1alpha1.PushSecret) {
				ps.Spec.DataTo = []esv1alpha1.PushSecretDataTo{{StoreRef: &esv1alpha1.PushSecretStoreRef{Name: "aws"}}}
			},
			wantReason: esv1alpha1.ReasonErrored, wantRequeue: time.Hour,
		},
		"a bad entry waits for a change": {
			objs: []client.Object{fakeConfig("team-a"), secretStore("vault", nil), sourceSecret("src", map[string]string{"pw": "x"})},
			mutate: func(ps *esv1alpha1.PushSecret) {
				ps.Spec.Data = []esv1alpha1.PushSecretData{dataEntry("nope", "x", "")}
			},
			wantReason: esv1alpha1.ReasonErrored, wantRequeue: time.Hour,
		},
	} {
		t.Run(name, func(t *testing.T) {
			ps := pushSecret()
			if tc.mutate != nil {
				tc.mutate(ps)
			}
			h := newHarness(t, append(tc.objs, ps)...)
			if tc.setup != nil {
				tc.setup(h.backend)
			}
			if err := h.c.Get(ctx, client.ObjectKeyFromObject(ps), ps); err != nil {
				t.Fatal(err)
			}
			res, err := h.r.sync(ctx, h.scope(ps))
			if (err != nil) != tc.wantErr || res.RequeueAfter != tc.wantRequeue {
				t.Errorf("sync = %+v, %v; want requeue after %v, an error %v", res, err, tc.wantRequeue, tc.wantErr)
			}
			var stored esv1alpha1.PushSecret
			if err := h.c.Get(ctx, client.ObjectKeyFromObject(ps), &stored); err != nil {
				t.Fatal(err)
			}
			switch c := ready(&stored); {
			case tc.wantReason == "" && c != nil:
				t.Errorf("status written: %+v", c)
			case tc.wantReason != "" && (c == nil || c.Reason != tc.wantReason):
				t.Errorf("Ready %+v, want reason %s", c, tc.wantReason)
			}
			for k, want := range tc.wantRemote {
				if got, _ := h.backend.value(k); got != want {
					t.Errorf("remote %s = %q, want %q", k, got, want)
				}
			}
			if tc.wantRemote != nil && len(tc.wantRemote) == 0 && len(h.backend.secrets) != 0 {
				t.Errorf("remote secrets left: %v", h.backend.secrets)
			}
		})
	}
}

// TestSyncWritesNothingWhenNothingChanged: a second sync of an unchanged
// PushSecret asks no provider and writes no status.
func TestSyncWritesNothingWhenNothingChanged(t *testing.T) {
	ps := pushSecret()
	h := newHarness(t, fakeConfig("team-a"), secretStore("vault", nil), sourceSecret("src", map[string]string{"pw": "x"}), ps)
	sync := func() esv1alpha1.PushSecret {
		t.Helper()
		var cur esv1alpha1.PushSecret
		if err := h.c.Get(ctx, client.ObjectKeyFromObject(ps), &cur); err != nil {
			t.Fatal(err)
		}
		if _, err := h.r.sync(ctx, h.scope(&cur)); err != nil {
			t.Fatal(err)
		}
		if err := h.c.Get(ctx, client.ObjectKeyFromObject(ps), &cur); err != nil {
			t.Fatal(err)
		}
		return cur
	}
	first := sync()
	h.now = t0.Add(10 * time.Minute)
	second := sync()
	if len(h.backend.pushes) != 1 || second.ResourceVersion != first.ResourceVersion {
		t.Errorf("pushes %v, resourceVersion %s then %s: want one push and no second status write", h.backend.pushes, first.ResourceVersion, second.ResourceVersion)
	}
	// A refresh that finds the store as it should be pushes (the provider
	// compares) but moves no status.
	h.now = t0.Add(2 * time.Hour)
	third := sync()
	if third.Status.RefreshTime != first.Status.RefreshTime {
		t.Errorf("refreshTime moved from %v to %v though nothing changed", first.Status.RefreshTime, third.Status.RefreshTime)
	}
}
