package externalsecret

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/apis/lenient"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/app/metrics"
	"github.com/eso-dev/eso/app/outcomes"
	"github.com/eso-dev/eso/app/secrettemplate"
	"github.com/eso-dev/eso/app/stores"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/tests/testenv"
)

// stallCase is one way a sync ends, and whether the ExternalSecret stalls.
type stallCase struct {
	name string
	// err is the failure; nil for an outcome that is no failure, which
	// succeed records.
	err     error
	succeed func(*esv1.ExternalSecret)
	// reason is Synced's reason (eso's own).
	reason string
	stalls bool
}

// stallCases: every way a sync ends that eso tells apart, with the reason it
// shows and whether only an edit of the ExternalSecret can end it. Errors
// are made by the code that makes them where that is cheap, so the table
// follows what eso does rather than what it is meant to do.
func stallCases(t *testing.T) []stallCase {
	t.Helper()
	render := func(tpl esv1.ExternalSecretTemplate, src secrettemplate.Sources) error {
		_, err := secrettemplate.Render(&tpl, map[string][]byte{"k": []byte("v")}, src)
		if err == nil {
			t.Fatalf("template %+v rendered", tpl)
		}
		return err
	}
	cm := func(name, key string) *esv1.TemplateRef {
		return &esv1.TemplateRef{Name: name, Items: []esv1.TemplateRefItem{{Key: key}}}
	}
	badSource := secrettemplate.Sources{ConfigMaps: map[string]map[string]string{"tpl": {"k": "{{ .k "}}}
	windowErr := func() error {
		_, err := windowWait(&esv1.SyncWindows{Kind: esv1.SyncWindowDeny, Windows: []esv1.SyncWindow{
			{Schedule: "61 * * * *", Duration: metav1.Duration{Duration: time.Hour}}}}, t0)
		return err
	}
	rewriteErr := func(rule esv1.ExternalSecretRewrite) error {
		_, err := rewrite(secrettemplate.NewBudget(), []esv1.ExternalSecretRewrite{rule}, map[string][]byte{"a": []byte("1"), "b": []byte("2")})
		return err
	}
	missingSource := func() error {
		_, err := secrettemplate.ReadSources(context.Background(), ctrlfake.NewClientBuilder().Build(), secrettemplate.NewBudget(), "ns",
			&esv1.ExternalSecretTemplate{TemplateFrom: []esv1.TemplateFrom{{ConfigMap: cm("tpl", "k")}}})
		if err == nil {
			t.Fatal("a missing ConfigMap was read")
		}
		return err
	}
	now := metav1.NewTime(t0)
	return []stallCase{
		// Only an edit of the ExternalSecret ends these.
		{name: "spec that does not decode", err: fmt.Errorf("%w (json: cannot unmarshal): fix or recreate it", lenient.ErrUndecodable),
			reason: esv1.ReasonInvalidSpec, stalls: true},
		{name: "template that does not parse", err: render(esv1.ExternalSecretTemplate{Data: map[string]string{"k": "{{ .k "}}, secrettemplate.Sources{}),
			reason: esv1.ReasonTemplateError, stalls: true},
		{name: "template with an unknown function", err: render(esv1.ExternalSecretTemplate{Data: map[string]string{"k": `{{ env "HOME" }}`}}, secrettemplate.Sources{}),
			reason: esv1.ReasonTemplateError, stalls: true},
		{name: "label template that does not parse", err: render(esv1.ExternalSecretTemplate{Metadata: esv1.ExternalSecretTemplateMetadata{Labels: map[string]string{"l": "{{"}}}, secrettemplate.Sources{}),
			reason: esv1.ReasonTemplateError, stalls: true},
		{name: "literal templateFrom that does not parse", err: render(esv1.ExternalSecretTemplate{TemplateFrom: []esv1.TemplateFrom{{Literal: ptr.To("{{ end }}")}}}, secrettemplate.Sources{}),
			reason: esv1.ReasonTemplateError, stalls: true},
		{name: "templateFrom target eso does not know", err: render(esv1.ExternalSecretTemplate{TemplateFrom: []esv1.TemplateFrom{{Literal: ptr.To("a: b"), Target: "Elsewhere"}}}, secrettemplate.Sources{}),
			reason: esv1.ReasonTemplateError, stalls: true},
		{name: "templateFrom naming no source", err: render(esv1.ExternalSecretTemplate{TemplateFrom: []esv1.TemplateFrom{{}}}, secrettemplate.Sources{}),
			reason: esv1.ReasonTemplateError, stalls: true},
		{name: "store apiVersion eso does not serve", err: fmt.Errorf("%w %q: this eso serves v2alpha1", stores.ErrUnsupportedVersion, "external-secrets.io/v1beta1"),
			reason: esv1.ReasonUnsupportedStore, stalls: true},
		{name: "no store named", err: errNoStore, reason: esv1.ReasonStoreNotFound, stalls: true},
		{name: "rewrite regexp that does not compile", err: rewriteErr(re("(", "")), reason: esv1.ReasonSecretSyncedError, stalls: true},
		{name: "rewrite transform that does not parse", err: rewriteErr(tr("{{ .value ")), reason: esv1.ReasonSecretSyncedError, stalls: true},
		{name: "sync window schedule that does not parse", err: windowErr(), reason: esv1.ReasonSecretSyncedError, stalls: true},

		// These may end without an edit: what is missing may arrive, what
		// refuses may change its mind, the values may change.
		{name: "store that does not exist yet", err: fmt.Errorf("%w: SecretStore ns/db", stores.ErrStoreNotFound), reason: esv1.ReasonStoreNotFound},
		{name: "store not Ready", err: stores.ErrStoreNotReady, reason: esv1.ReasonStoreNotReady},
		{name: "namespace the ClusterSecretStore does not admit", err: stores.ErrNotAllowed, reason: esv1.ReasonStoreNotAllowed},
		{name: "store naming another namespace's configuration", err: stores.ErrCrossNamespace, reason: esv1.ReasonStoreNotAllowed},
		{name: "provider refusing the scope", err: plugin.ErrOutOfScope, reason: esv1.ReasonStoreNotAllowed},
		{name: "provider kind not compiled in", err: stores.ErrNotCompiledIn, reason: esv1.ReasonUnsupportedStore},
		{name: "store apiVersion external-secrets.io/v1 in a build without the v1 layer", err: v1WithoutTheLayer(t),
			reason: esv1.ReasonUnsupportedStore},
		{name: "provider processes not enabled", err: stores.ErrRemoteNotEnabled, reason: esv1.ReasonUnsupportedStore},
		{name: "provider process of another protocol", err: plugin.ErrIncompatible, reason: esv1.ReasonUnsupportedStore},
		{name: "templateFrom source that does not exist yet", err: missingSource(),
			reason: esv1.ReasonTemplateError},
		{name: "templateFrom source that does not parse", err: render(esv1.ExternalSecretTemplate{TemplateFrom: []esv1.TemplateFrom{{ConfigMap: cm("tpl", "k")}}}, badSource),
			reason: esv1.ReasonTemplateError},
		{name: "templateFrom source without the key", err: render(esv1.ExternalSecretTemplate{TemplateFrom: []esv1.TemplateFrom{{ConfigMap: cm("tpl", "other")}}}, badSource),
			reason: esv1.ReasonTemplateError},
		{name: "template failing on the values", err: render(esv1.ExternalSecretTemplate{Data: map[string]string{"k": "{{ .absent }}"}}, secrettemplate.Sources{}),
			reason: esv1.ReasonTemplateError},
		{name: "remote secret that does not exist", err: plugin.ErrSecretNotFound, reason: esv1.ReasonSecretNotFound},
		{name: "remote property that does not exist", err: plugin.ErrPropertyNotFound, reason: esv1.ReasonSecretNotFound},
		{name: "credentials Secret that does not exist yet", err: plugin.ErrCredentialsNotFound, reason: esv1.ReasonProviderError},
		{name: "provider configuration that does not exist yet", err: plugin.ErrConfigNotFound, reason: esv1.ReasonProviderError},
		{name: "invalid provider configuration", err: plugin.ErrInvalidConfig, reason: esv1.ReasonProviderError},
		{name: "request the provider does not support", err: plugin.ErrNotSupported, reason: esv1.ReasonProviderError},
		{name: "credentials refused", err: plugin.ErrAuthFailed, reason: esv1.ReasonSecretSyncedError},
		{name: "remote secret not eso's", err: plugin.ErrNotManaged, reason: esv1.ReasonSecretSyncedError},
		{name: "provider unreachable", err: errors.New("dial tcp: connection refused"), reason: esv1.ReasonSecretSyncedError},
		{name: "target written by another", err: fmt.Errorf("%w: Secret app is controlled by Deployment web", errTargetConflict), reason: esv1.ReasonTargetConflict},
		{name: "target immutable", err: errTargetImmutable, reason: esv1.ReasonTargetImmutable},
		{name: "target the API server refuses", err: apierrors.NewInvalid(schema.GroupKind{Kind: "Secret"}, "app",
			field.ErrorList{field.Invalid(field.NewPath("data"), "a b", "not a key")}), reason: esv1.ReasonSecretSyncedError},
		{name: "target of a credential Secret type", err: errCredentialType, reason: esv1.ReasonSecretSyncedError},
		{name: "value that does not decode", err: fmt.Errorf("%w: value of %q is not valid base64", errBadValue, "k"), reason: esv1.ReasonSecretSyncedError},
		{name: "rewrite colliding on the keys met", err: rewriteErr(re("^[ab]$", "same")), reason: esv1.ReasonSecretSyncedError},

		// No failure: a stall, if any, ends.
		{name: "synced", succeed: func(es *esv1.ExternalSecret) { setSynced(es, true, now) }, reason: esv1.ReasonSecretSynced},
		{name: "remote secrets deleted", succeed: func(es *esv1.ExternalSecret) { setDeleted(es, true, now) }, reason: esv1.ReasonSecretDeleted},
		{name: "nothing matched under Retain", succeed: func(es *esv1.ExternalSecret) { setRetained(es, now) }, reason: esv1.ReasonSecretSynced},
		{name: "Merge target missing", succeed: setMissing, reason: esv1.ReasonSecretMissing},
	}
}

// v1WithoutTheLayer is the error of a store reference to
// external-secrets.io/v1 in a build without the v1 layer (tag nov1): eso
// serves that apiVersion, another build of it does, so no edit is needed.
func v1WithoutTheLayer(t *testing.T) error {
	t.Helper()
	_, err := stores.NewResolver(nil, nil, nil, "").Get(context.Background(), "ns",
		esv1.SecretStoreRef{Name: "db", Kind: stores.KindSecretStore, APIVersion: stores.StoreAPIVersionV1})
	if !errors.Is(err, stores.ErrUnsupportedVersion) || !strings.Contains(err.Error(), "built without the v1 compatibility layer") {
		t.Fatalf("a v1 store reference without the v1 layer: %v", err)
	}
	return err
}

// TestStalledOnlyForWhatOnlyAnEditFixes: Stalled=True (kstatus: Failed) for
// exactly the failures retrying cannot end and only an edit of the
// ExternalSecret's spec can, with Synced's reason and message and the
// generation it was seen at; none for a failure that may pass by itself or
// by another object's arrival or change (eso converges in any order of
// apply); none after a success. Every reason an ExternalSecret shows is in
// the table, so a new one cannot come without deciding whether it stalls.
func TestStalledOnlyForWhatOnlyAnEditFixes(t *testing.T) {
	cases := stallCases(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			es := stepES(nil)
			es.Generation = 3
			// Stalled at an earlier generation: the outcome at this one
			// decides alone.
			setFailed(es, errNoStore)
			for i := range es.Status.Conditions {
				es.Status.Conditions[i].ObservedGeneration = 2
			}
			if tc.err == nil {
				tc.succeed(es)
			} else {
				// The outcome fail acts on: a stall is never retried.
				out := setFailed(es, tc.err)
				if out.Stalls != tc.stalls {
					t.Errorf("%v: Stalls = %v", tc.err, out.Stalls)
				}
				if out.Stalls && out.SyncRetry != outcomes.Wait {
					t.Errorf("%v stalls but is retried (%v)", tc.err, out.SyncRetry)
				}
			}
			synced := syncedCondition(es)
			if synced == nil || synced.Reason != tc.reason {
				t.Fatalf("Synced = %+v, want reason %s", synced, tc.reason)
			}
			stalled := meta.FindStatusCondition(es.Status.Conditions, esv1.ConditionStalled)
			switch {
			case !tc.stalls && stalled != nil:
				t.Errorf("Stalled = %+v, want none", stalled)
			case tc.stalls && stalled == nil:
				t.Errorf("no Stalled condition for %v", tc.err)
			case tc.stalls:
				if stalled.Status != metav1.ConditionTrue || stalled.Reason != synced.Reason || stalled.Message != synced.Message ||
					stalled.ObservedGeneration != es.Generation {
					t.Errorf("Stalled = %+v; want True with Synced's reason and message (%s: %s) at generation %d",
						stalled, synced.Reason, synced.Message, es.Generation)
				}
			}
		})
	}

	covered := map[string]bool{}
	for _, tc := range cases {
		covered[tc.reason] = true
		if tc.err != nil {
			covered[upstreamReason(tc.reason)] = true
		}
	}
	for _, reason := range externalSecretReasons(t) {
		if !covered[reason] {
			t.Errorf("reason %s is in no row: add the failures that show it, and whether they stall", reason)
		}
	}
}

// externalSecretReasons are the reasons an ExternalSecret's Ready and
// Synced take: the Reason constants its API file declares.
func externalSecretReasons(t *testing.T) []string {
	t.Helper()
	path := filepath.Join(testenv.RepoRoot(), "apis", "externalsecrets", "v1", "externalsecret_types.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if !strings.HasPrefix(name.Name, "Reason") || i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Fatalf("%s is not a string literal", name.Name)
				}
				v, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				reasons = append(reasons, v)
			}
		}
	}
	if len(reasons) < 14 {
		t.Fatalf("found only %d reasons in %s: %v", len(reasons), path, reasons)
	}
	return reasons
}

// TestStallCostsOneWrite: a template that does not parse stalls the
// ExternalSecret with one status write; reconciling it again writes
// nothing and schedules no retry (only an edit ends it, and edits are
// watched); the edit that fixes it syncs and removes Stalled in the same
// status write.
func TestStallCostsOneWrite(t *testing.T) {
	ns := env.Namespace(t, "stall", nil)
	h := newHarness(t)
	es := externalSecret(ns)
	es.Spec.Target.Template = &esv1.ExternalSecretTemplate{Data: map[string]string{"password": "{{ .password "}}
	create(t, fakeConfig(ns, provv1.FakeSecret{Key: "db", Value: `{"password":"p"}`}), secretStore(ns), es)

	h.reconcile(t, es)
	got := getES(t, es)
	stalled := meta.FindStatusCondition(got.Status.Conditions, esv1.ConditionStalled)
	if stalled == nil || stalled.Status != metav1.ConditionTrue || stalled.Reason != esv1.ReasonTemplateError ||
		stalled.ObservedGeneration != got.Generation || !strings.Contains(stalled.Message, "data.password") {
		t.Fatalf("Stalled = %+v", stalled)
	}
	if got.Status.ObservedGeneration != got.Generation {
		t.Errorf("status.observedGeneration = %d, want %d", got.Status.ObservedGeneration, got.Generation)
	}
	if res := kstatusOf(t, got); res.Status != kstatus.FailedStatus {
		t.Errorf("kstatus of the stalled ExternalSecret: %s (%s), want Failed", res.Status, res.Message)
	}
	if n := h.writes.statusWrites.Load(); n != 1 || h.writes.total() != 1 {
		t.Errorf("stalling: %d status writes, %d writes in all; want 1 and 1", n, h.writes.total())
	}
	if n := conditionSeries(t, got, esv1.ConditionStalled); n != 3 {
		t.Errorf("stalled: %d series of the Stalled condition, want 3 (one per status)", n)
	}

	h.writes.reset()
	res, err := h.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(es)})
	if err != nil || res != (ctrl.Result{}) {
		t.Errorf("reconciling a stalled ExternalSecret: %+v, %v; want no retry", res, err)
	}
	if n := h.writes.total(); n != 0 {
		t.Errorf("reconciling a stalled ExternalSecret again made %d writes", n)
	}

	patch := client.MergeFrom(got.DeepCopy())
	got.Spec.Target.Template.Data["password"] = "{{ .password }}"
	if err := env.Client.Patch(context.Background(), got, patch); err != nil {
		t.Fatal(err)
	}
	// Edited, not yet reconciled: the stall describes the generation
	// before, so kstatus waits (InProgress) instead of failing the rollout
	// that brings the fix.
	if res := kstatusOf(t, getES(t, es)); res.Status != kstatus.InProgressStatus {
		t.Errorf("kstatus of the edited ExternalSecret before eso looked: %s (%s), want InProgress", res.Status, res.Message)
	}
	h.writes.reset()
	h.reconcile(t, got)
	got = getES(t, es)
	if got.Status.ObservedGeneration != got.Generation || got.Generation < 2 {
		t.Errorf("after the fix: status.observedGeneration = %d, generation %d", got.Status.ObservedGeneration, got.Generation)
	}
	if res := kstatusOf(t, got); res.Status != kstatus.CurrentStatus {
		t.Errorf("kstatus after the fix: %s (%s), want Current", res.Status, res.Message)
	}
	if c := meta.FindStatusCondition(got.Status.Conditions, esv1.ConditionStalled); c != nil {
		t.Errorf("Stalled after the fix: %+v", c)
	}
	if c := readyCondition(got); c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != got.Generation {
		t.Errorf("Ready after the fix: %+v", c)
	}
	if n := h.writes.statusWrites.Load(); n != 1 {
		t.Errorf("the fix made %d status writes, want 1", n)
	}
	if n := conditionSeries(t, got, esv1.ConditionStalled); n != 0 {
		t.Errorf("after the fix: %d series of the Stalled condition, want none", n)
	}
	if n := conditionSeries(t, got, esv1.ConditionReady); n != 3 {
		t.Errorf("after the fix: %d series of the Ready condition, want 3", n)
	}
	if s := getSecret(t, ns, "app"); string(s.Data["password"]) != "p" {
		t.Errorf("Secret after the fix: %q", s.Data)
	}
}

// conditionSeries counts the series of es's condition in
// externalsecret_status_condition.
func conditionSeries(t *testing.T, es *esv1.ExternalSecret, condition string) int {
	t.Helper()
	ch := make(chan prometheus.Metric, 1024)
	go func() {
		metrics.ExternalSecrets.Collect(ch)
		close(ch)
	}()
	n := 0
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			t.Fatal(err)
		}
		labels := map[string]string{}
		for _, l := range pb.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["name"] == es.Name && labels["namespace"] == es.Namespace && labels["condition"] == condition {
			n++
		}
	}
	return n
}

// kstatusOf is what kstatus (Flux, kpt) makes of es.
func kstatusOf(t *testing.T, es *esv1.ExternalSecret) *kstatus.Result {
	t.Helper()
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(es)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetGroupVersionKind(esv1.GroupVersion.WithKind("ExternalSecret"))
	res, err := kstatus.Compute(u)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
