package statuswrite

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	genv2 "github.com/eso-dev/eso/apis/generator/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
)

func status(o client.Object) *esv1.ExternalSecretStatus { return &o.(*esv1.ExternalSecret).Status }

// TestIfChanged: an unchanged status costs no request; a changed one one
// patch carrying only the status.
func TestIfChanged(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := esv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	es := &esv1.ExternalSecret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "es"}}
	patches := 0
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(es).WithStatusSubresource(es).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			patches++
			return c.SubResource(sub).Patch(ctx, obj, p, opts...)
		}}).Build()
	ctx := context.Background()
	if err := c.Get(ctx, client.ObjectKeyFromObject(es), es); err != nil {
		t.Fatal(err)
	}
	before := *es.Status.DeepCopy()
	if wrote, err := IfChanged(ctx, c, nil, es, before, status, "ExternalSecret"); err != nil || wrote || patches != 0 {
		t.Fatalf("unchanged status: wrote %v, %d patches, %v", wrote, patches, err)
	}
	meta.SetStatusCondition(&es.Status.Conditions, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "SecretSynced"})
	if wrote, err := IfChanged(ctx, c, nil, es, before, status, "ExternalSecret"); err != nil || !wrote || patches != 1 {
		t.Fatalf("changed status: wrote %v, %d patches, %v", wrote, patches, err)
	}
	var stored esv1.ExternalSecret
	if err := c.Get(ctx, client.ObjectKeyFromObject(es), &stored); err != nil || meta.FindStatusCondition(stored.Status.Conditions, "Ready") == nil {
		t.Fatalf("the status did not arrive: %+v, %v", stored.Status, err)
	}
}

// TestIfChangedPatchesTheStatusAlone: the patch holds only what changed
// in the status (a field cleared as null), so an edit of the spec made
// since the read survives it, and obj takes the written metadata, so a
// later patch built on obj (a finalizer removed) keeps that edit too.
func TestIfChangedPatchesTheStatusAlone(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := esv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	es := &esv1.ExternalSecret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "es"},
		Status: esv1.ExternalSecretStatus{SyncedResourceVersion: "1-abc", Binding: esv1.SecretBinding{Name: "target"}}}
	var sent string
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(es).WithStatusSubresource(es).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			data, err := p.Data(obj)
			sent = string(data)
			if err != nil {
				return err
			}
			return c.SubResource(sub).Patch(ctx, obj, p, opts...)
		}}).Build()
	ctx := context.Background()
	if err := c.Get(ctx, client.ObjectKeyFromObject(es), es); err != nil {
		t.Fatal(err)
	}
	// Someone edits the spec and the finalizers after eso read the object.
	edited := es.DeepCopy()
	edited.Spec.Target.Name = "renamed"
	edited.Finalizers = []string{"example.com/keep"}
	if err := c.Update(ctx, edited); err != nil {
		t.Fatal(err)
	}
	before := *es.Status.DeepCopy()
	es.Status.SyncedResourceVersion = ""
	es.Status.Binding.Name = "other"
	if wrote, err := IfChanged(ctx, c, nil, es, before, status, "ExternalSecret"); err != nil || !wrote {
		t.Fatalf("wrote %v, %v", wrote, err)
	}
	if want := `{"status":{"binding":{"name":"other"},"syncedResourceVersion":null}}`; sent != want {
		t.Errorf("patch %s, want %s", sent, want)
	}
	var stored esv1.ExternalSecret
	if err := c.Get(ctx, client.ObjectKeyFromObject(es), &stored); err != nil {
		t.Fatal(err)
	}
	if stored.Spec.Target.Name != "renamed" || stored.Status.Binding.Name != "other" || stored.Status.SyncedResourceVersion != "" {
		t.Errorf("stored spec target %q, status %+v: want the edit kept and the status written", stored.Spec.Target.Name, stored.Status)
	}
	if es.ResourceVersion != stored.ResourceVersion || !slices.Equal(es.Finalizers, stored.Finalizers) {
		t.Errorf("obj holds resourceVersion %s and finalizers %v, the write made %s and %v: a patch built on obj would undo the edit",
			es.ResourceVersion, es.Finalizers, stored.ResourceVersion, stored.Finalizers)
	}
}

// TestIfChangedAfterTheDeadline: a reconcile whose deadline passed (a
// provider that hung) still writes its status; one that was cancelled
// (eso stopping) does not.
func TestIfChangedAfterTheDeadline(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := esv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	es := &esv1.ExternalSecret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "es"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(es).WithStatusSubresource(es).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			if err := ctx.Err(); err != nil {
				return err // as a real client does
			}
			return c.SubResource(sub).Patch(ctx, obj, p, opts...)
		}}).Build()
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(es), es); err != nil {
		t.Fatal(err)
	}
	before := *es.Status.DeepCopy()
	meta.SetStatusCondition(&es.Status.Conditions, metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "SecretSyncedError"})

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if wrote, err := IfChanged(cancelled, c, nil, es.DeepCopy(), before, status, "ExternalSecret"); wrote || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: wrote %v, %v; want no write", wrote, err)
	}
	late, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	if wrote, err := IfChanged(late, c, nil, es, before, status, "ExternalSecret"); err != nil || !wrote {
		t.Fatalf("past the deadline: wrote %v, %v; want the status written", wrote, err)
	}
}

// TestFreshWhenTheCacheLags: an object retried before the cache shows its
// failure's status write looks, in the cache, as it did before the
// failure. Recent reads it again, so its recovery is written; from that
// stale copy the recovery would equal the status read and not be. A copy
// that shows the write is trusted, with no read from the API server.
func TestFreshWhenTheCacheLags(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := esv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	es := &esv1.ExternalSecret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "es"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(es).WithStatusSubresource(es).Build()
	reads := 0
	api := interceptor.NewClient(c.(client.WithWatch), interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		reads++
		return c.Get(ctx, key, obj, opts...)
	}})
	recent := &Recent{API: api}
	ctx := context.Background()
	setReady := func(o *esv1.ExternalSecret, s metav1.ConditionStatus) {
		meta.SetStatusCondition(&o.Status.Conditions, metav1.Condition{Type: "Ready", Status: s, Reason: string(s)})
	}
	// Synced, and the cache shows it.
	stale := &esv1.ExternalSecret{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(es), stale); err != nil {
		t.Fatal(err)
	}
	setReady(stale, metav1.ConditionTrue)
	if err := c.Status().Update(ctx, stale); err != nil {
		t.Fatal(err)
	}
	// A sync fails and says so.
	failed := stale.DeepCopy()
	setReady(failed, metav1.ConditionFalse)
	if wrote, err := IfChanged(ctx, c, recent, failed, *stale.Status.DeepCopy(), status, "ExternalSecret"); err != nil || !wrote {
		t.Fatalf("failure: wrote %v, %v", wrote, err)
	}
	// The retry reads the copy from before the failure, and recovers.
	retry := stale.DeepCopy()
	if err := recent.fresh(ctx, retry); err != nil || reads != 1 {
		t.Fatalf("fresh: %d reads, %v; want one read", reads, err)
	}
	before := *retry.Status.DeepCopy()
	setReady(retry, metav1.ConditionTrue)
	if wrote, err := IfChanged(ctx, c, recent, retry, before, status, "ExternalSecret"); err != nil || !wrote {
		t.Fatalf("recovery: wrote %v, %v; want the status written", wrote, err)
	}
	var stored esv1.ExternalSecret
	if err := c.Get(ctx, client.ObjectKeyFromObject(es), &stored); err != nil {
		t.Fatal(err)
	}
	if got := meta.FindStatusCondition(stored.Status.Conditions, "Ready"); got == nil || got.Status != metav1.ConditionTrue {
		t.Fatalf("the API server holds Ready %+v, want True", got)
	}
	// Once the cache shows the write, it is trusted.
	reads = 0
	if err := recent.fresh(ctx, stored.DeepCopy()); err != nil || reads != 0 {
		t.Fatalf("a copy showing the write: %d reads, %v; want none", reads, err)
	}
}

// TestStatusPatch: the patch turns an object holding the status before
// into one holding the status after, whatever was set, changed or removed;
// removals are sent as nulls.
func TestStatusPatch(t *testing.T) {
	synced := esv1.ExternalSecretStatus{SyncedResourceVersion: "1-abc", Binding: esv1.SecretBinding{Name: "target"},
		RefreshTime: metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))}
	failed := esv1.ExternalSecretStatus{Conditions: []metav1.Condition{{Type: esv1.ConditionReady, Status: metav1.ConditionFalse,
		Reason: esv1.ReasonSecretSyncedError, Message: "no such key", LastTransitionTime: synced.RefreshTime}}}
	for _, tc := range []struct {
		name          string
		before, after esv1.ExternalSecretStatus
		// stored is the status the API server holds, when the cache did
		// not show it yet (before otherwise); wantStored what the patch
		// leaves there (after otherwise).
		stored, wantStored *esv1.ExternalSecretStatus
		want               string // the patch, when it is to be exactly this
	}{
		{name: "first status", after: synced},
		{name: "first status without a refresh time, one stored meanwhile", after: failed, stored: &synced,
			wantStored: &esv1.ExternalSecretStatus{Conditions: failed.Conditions, RefreshTime: synced.RefreshTime,
				SyncedResourceVersion: synced.SyncedResourceVersion, Binding: synced.Binding}},
		{name: "a field removed, another changed", before: synced,
			after: esv1.ExternalSecretStatus{Binding: esv1.SecretBinding{Name: "other"}, RefreshTime: synced.RefreshTime},
			want:  `{"status":{"binding":{"name":"other"},"syncedResourceVersion":null}}`},
		{name: "every field removed", before: synced},
	} {
		t.Run(tc.name, func(t *testing.T) {
			patch, err := statusPatch(tc.before, tc.after)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want != "" && string(patch) != tc.want {
				t.Errorf("patch %s, want %s", patch, tc.want)
			}
			stored, wantStored := &tc.before, &tc.after
			if tc.stored != nil {
				stored, wantStored = tc.stored, tc.wantStored
			}
			doc, err := json.Marshal(&esv1.ExternalSecret{ObjectMeta: metav1.ObjectMeta{Name: "es"}, Status: *stored})
			if err != nil {
				t.Fatal(err)
			}
			if doc, err = jsonpatch.MergePatch(doc, patch); err != nil {
				t.Fatal(err)
			}
			var got esv1.ExternalSecret
			if err := json.Unmarshal(doc, &got); err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(got.Status, *wantStored) {
				t.Errorf("patch %s turns %+v into %+v, want %+v", patch, *stored, got.Status, *wantStored)
			}
		})
	}
}

// TestZeroStatusesEncodeNoValues: the zero status of every kind whose status
// IfChanged writes encodes no value but null and {}, which statusPatch's
// shortcut for a first status relies on: a field that encodes a zero value
// (a 0, a "", a false) without omitempty would be sent, and would overwrite
// a stored value the cache did not show yet.
func TestZeroStatusesEncodeNoValues(t *testing.T) {
	for _, zero := range []any{
		esv1.ExternalSecretStatus{}, esv1.ClusterExternalSecretStatus{},
		esv1alpha1.PushSecretStatus{}, esv1alpha1.ClusterPushSecretStatus{},
		ssv2.SecretStoreStatus{}, genv2.GeneratorStatus{}, genv2.GeneratorStateStatus{},
	} {
		data, err := json.Marshal(zero)
		if err != nil {
			t.Fatal(err)
		}
		var decoded any
		if err := json.Unmarshal(data, &decoded); err != nil {
			t.Fatal(err)
		}
		if path, value, ok := aValue(decoded, ""); ok {
			t.Errorf("the zero %T encodes %s as %v: %s", zero, path, value, data)
		}
	}
}

// aValue finds a value in decoded JSON other than null and objects of such.
func aValue(v any, path string) (string, any, bool) {
	switch v := v.(type) {
	case nil:
		return "", nil, false
	case map[string]any:
		for k, field := range v {
			if p, value, ok := aValue(field, path+"."+k); ok {
				return p, value, true
			}
		}
		return "", nil, false
	}
	return path, v, true
}
