package externalsecret

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/apis/lenient"
	"github.com/eso-dev/eso/app/refresh"
	"github.com/eso-dev/eso/providers/plugin"
)

// These are the table tests of the sync's steps (steps.go), one per step
// that decides something on its own; resolving stores, generating and
// fetching are exercised against a real API server in reconcile_test.go.

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func stepES(mutate func(*esv1.ExternalSecret)) *esv1.ExternalSecret {
	es := &esv1.ExternalSecret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app", UID: "uid-1", ResourceVersion: "1", Generation: 1},
		Spec:       esv1.ExternalSecretSpec{RefreshInterval: &metav1.Duration{Duration: time.Hour}},
	}
	if mutate != nil {
		mutate(es)
	}
	return es
}

// synced marks es as synced at when, as a status written by an earlier eso
// would say.
func synced(at time.Time) func(*esv1.ExternalSecret) {
	return func(es *esv1.ExternalSecret) {
		es.Status.SyncedResourceVersion = SyncedVersion(es)
		es.Status.RefreshTime = metav1.NewTime(at)
		setReady(es, metav1.ConditionTrue, esv1.ReasonSecretSynced, "")
	}
}

func ownedTarget(es *esv1.ExternalSecret) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: es.Namespace, Name: es.TargetName()}}
	return s
}

// writtenTarget is the target as eso wrote it: its data hash matches.
func writtenTarget() *corev1.Secret {
	data := map[string][]byte{"a": []byte("1")}
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{esv1.AnnotationDataHash: dataHash(data)}}, Data: data}
}

func TestDecodeSpecStep(t *testing.T) {
	undecodable := stepES(func(es *esv1.ExternalSecret) {
		es.Annotations = map[string]string{"eso.external-secrets.io/decode-error": "spec.refreshInterval: bad"}
	})
	for name, tc := range map[string]struct {
		es      *esv1.ExternalSecret
		wantErr error
	}{
		"decoded":     {stepES(nil), nil},
		"undecodable": {undecodable, lenient.ErrUndecodable},
	} {
		end, err := decodeSpec(context.Background(), &syncScope{es: tc.es})
		if end != next || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
			t.Errorf("%s: %v, %v; want next, %v", name, end, err, tc.wantErr)
		}
	}
}

func TestCheckDueStep(t *testing.T) {
	cases := map[string]struct {
		es *esv1.ExternalSecret
		// target: nil is a target that is gone
		target   *corev1.Secret
		now      time.Time
		wantEnd  end
		wantWait time.Duration // upper bound when > 0 (jitter is added)
		wantErr  bool
	}{
		"new":           {es: stepES(nil), now: t0, wantEnd: next},
		"target gone":   {es: stepES(synced(t0.Add(-time.Minute))), now: t0, wantEnd: next},
		"target edited": {es: stepES(synced(t0.Add(-time.Minute))), target: &corev1.Secret{Data: map[string][]byte{"a": []byte("x")}}, now: t0, wantEnd: next},
		"synced a minute ago": {es: stepES(synced(t0.Add(-time.Minute))), target: writtenTarget(), now: t0, wantEnd: endUntil,
			wantWait: 59*time.Minute + 6*time.Minute},
		"refresh due": {es: stepES(synced(t0.Add(-2 * time.Hour))), target: writtenTarget(), now: t0, wantEnd: next},
		"edited since its sync": {es: func() *esv1.ExternalSecret {
			es := stepES(synced(t0.Add(-time.Minute)))
			es.Generation = 2
			return es
		}(), target: writtenTarget(), now: t0, wantEnd: next},
		"last attempt failed": {es: func() *esv1.ExternalSecret {
			es := stepES(synced(t0.Add(-time.Minute)))
			setReady(es, metav1.ConditionFalse, esv1.ReasonSecretSyncedError, "boom")
			return es
		}(), target: writtenTarget(), now: t0, wantEnd: next},
		"refresh interval 0 after a sync": {es: stepES(func(es *esv1.ExternalSecret) {
			es.Spec.RefreshInterval = &metav1.Duration{}
			synced(t0.Add(-48 * time.Hour))(es)
		}), target: writtenTarget(), now: t0, wantEnd: endUntil},
		"created once, target there": {es: stepES(func(es *esv1.ExternalSecret) {
			es.Spec.RefreshPolicy = esv1.RefreshPolicyCreatedOnce
			synced(t0.Add(-48 * time.Hour))(es)
		}), target: writtenTarget(), now: t0, wantEnd: endUntil},
		// Upstream's decision, rows of its isSecretValid and shouldRefresh
		// (pkg/controllers/externalsecret/externalsecret_controller.go, v2.9).
		"created once, owned target deleted: recreated": {es: stepES(func(es *esv1.ExternalSecret) {
			es.Spec.RefreshPolicy = esv1.RefreshPolicyCreatedOnce
			synced(t0.Add(-48 * time.Hour))(es)
		}), now: t0, wantEnd: next},
		"created once, orphaned target deleted: left deleted": {es: stepES(func(es *esv1.ExternalSecret) {
			es.Spec.RefreshPolicy = esv1.RefreshPolicyCreatedOnce
			es.Spec.Target.CreationPolicy = esv1.CreatePolicyOrphan
			synced(t0.Add(-48 * time.Hour))(es)
		}), now: t0, wantEnd: endUntil},
		"refresh interval 0, edited since its sync: not read again": {es: stepES(func(es *esv1.ExternalSecret) {
			es.Spec.RefreshInterval = &metav1.Duration{}
			synced(t0.Add(-time.Minute))(es)
			es.Generation = 2
			es.Annotations = map[string]string{"force-sync": "now"}
		}), target: writtenTarget(), now: t0, wantEnd: endUntil},
		"refresh interval 0, after a failure: not read again": {es: stepES(func(es *esv1.ExternalSecret) {
			es.Spec.RefreshInterval = &metav1.Duration{}
			synced(t0.Add(-time.Minute))(es)
			setReady(es, metav1.ConditionFalse, esv1.ReasonSecretSyncedError, "boom")
		}), target: writtenTarget(), now: t0, wantEnd: endUntil},
		"refresh interval 0, owned target edited: repaired": {es: stepES(func(es *esv1.ExternalSecret) {
			es.Spec.RefreshInterval = &metav1.Duration{}
			synced(t0.Add(-time.Minute))(es)
		}), target: &corev1.Secret{Data: map[string][]byte{"a": []byte("edited")}}, now: t0, wantEnd: next},
		"refresh interval 0, orphaned target edited: left": {es: stepES(func(es *esv1.ExternalSecret) {
			es.Spec.RefreshInterval = &metav1.Duration{}
			es.Spec.Target.CreationPolicy = esv1.CreatePolicyOrphan
			synced(t0.Add(-time.Minute))(es)
		}), target: &corev1.Secret{Data: map[string][]byte{"a": []byte("edited")}}, now: t0, wantEnd: endUntil},
		"refresh interval 0, never synced": {es: stepES(func(es *esv1.ExternalSecret) {
			es.Spec.RefreshInterval = &metav1.Duration{}
		}), now: t0, wantEnd: next},
		"on change, edited": {es: stepES(func(es *esv1.ExternalSecret) {
			es.Spec.RefreshPolicy = esv1.RefreshPolicyOnChange
			synced(t0.Add(-48 * time.Hour))(es)
			es.Generation = 2
		}), target: writtenTarget(), now: t0, wantEnd: next},
		"on change, unchanged: never periodic": {es: stepES(func(es *esv1.ExternalSecret) {
			es.Spec.RefreshPolicy = esv1.RefreshPolicyOnChange
			synced(t0.Add(-48 * time.Hour))(es)
		}), target: writtenTarget(), now: t0, wantEnd: endUntil},
		"refresh held back by a closed window": {es: stepES(func(es *esv1.ExternalSecret) {
			synced(t0.Add(-2 * time.Hour))(es)
			es.Spec.SyncWindows = &esv1.SyncWindows{Kind: esv1.SyncWindowAllow, Windows: []esv1.SyncWindow{{Schedule: "0 0 * * *", Duration: metav1.Duration{Duration: time.Hour}}}}
		}), target: writtenTarget(), now: t0, wantEnd: endUntil, wantWait: 12 * time.Hour},
		"invalid window": {es: stepES(func(es *esv1.ExternalSecret) {
			synced(t0.Add(-2 * time.Hour))(es)
			es.Spec.SyncWindows = &esv1.SyncWindows{Kind: esv1.SyncWindowAllow, Windows: []esv1.SyncWindow{{Schedule: "not a schedule", Duration: metav1.Duration{Duration: time.Hour}}}}
		}), target: writtenTarget(), now: t0, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := &Reconciler{} // repairs are paced per reconciler
			sc := &syncScope{es: tc.es, target: tc.target, now: tc.now}
			got, err := r.checkDue(context.Background(), sc)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if err != nil {
				return
			}
			if got != tc.wantEnd || sc.due != (got == next) {
				t.Fatalf("end %v due %v, want end %v", got, sc.due, tc.wantEnd)
			}
			if tc.wantWait > 0 && (sc.wait <= 0 || sc.wait > tc.wantWait) {
				t.Errorf("wait %v, want in (0, %v]", sc.wait, tc.wantWait)
			}
		})
	}
}

// TestCheckDueAcknowledges: an edit nothing will sync (refreshPolicy
// CreatedOnce, refreshInterval 0) moves a healthy ExternalSecret's
// conditions to the generation, so its status describes it; an edit that
// syncs is left to the sync, a status that is not Ready to the next
// attempt, and a state this process synced itself (the status says so,
// whatever the cache shows) is not acknowledged again.
func TestCheckDueAcknowledges(t *testing.T) {
	edited := func(mutate func(*esv1.ExternalSecret)) *esv1.ExternalSecret {
		return stepES(func(es *esv1.ExternalSecret) {
			mutate(es)
			synced(t0.Add(-time.Minute))(es)
			es.Generation = 2
		})
	}
	createdOnce := func(es *esv1.ExternalSecret) { es.Spec.RefreshPolicy = esv1.RefreshPolicyCreatedOnce }
	intervalZero := func(es *esv1.ExternalSecret) { es.Spec.RefreshInterval = &metav1.Duration{} }
	cases := map[string]struct {
		es         *esv1.ExternalSecret
		remembered bool // this process synced the ExternalSecret as it is now
		wantEnd    end
		wantGen    int64 // the conditions' observedGeneration afterwards
	}{
		"created once, edited":       {es: edited(createdOnce), wantEnd: endUntil, wantGen: 2},
		"refresh interval 0, edited": {es: edited(intervalZero), wantEnd: endUntil, wantGen: 2},
		"periodic, edited: synced":   {es: edited(func(*esv1.ExternalSecret) {}), wantEnd: next, wantGen: 1},
		"created once, not edited":   {es: stepES(func(es *esv1.ExternalSecret) { createdOnce(es); synced(t0.Add(-time.Minute))(es) }), wantEnd: endUntil, wantGen: 1},
		"created once, synced here":  {es: edited(createdOnce), remembered: true, wantEnd: endUntil, wantGen: 1},
		"refresh interval 0, failing": {es: func() *esv1.ExternalSecret {
			es := edited(intervalZero)
			setReady(es, metav1.ConditionFalse, esv1.ReasonSecretSyncedError, "boom")
			for i := range es.Status.Conditions {
				es.Status.Conditions[i].ObservedGeneration = 1
			}
			return es
		}(), wantEnd: endUntil, wantGen: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := &Reconciler{}
			if tc.remembered {
				r.synced.Store(types.NamespacedName{Namespace: tc.es.Namespace, Name: tc.es.Name},
					syncRecord{at: t0, uid: tc.es.UID, version: SyncedVersion(tc.es)})
			}
			sc := &syncScope{es: tc.es, target: writtenTarget(), now: t0}
			got, err := r.checkDue(context.Background(), sc)
			if err != nil || got != tc.wantEnd {
				t.Fatalf("end %v, %v; want %v", got, err, tc.wantEnd)
			}
			for _, c := range tc.es.Status.Conditions {
				if c.ObservedGeneration != tc.wantGen {
					t.Errorf("%s observedGeneration %d, want %d", c.Type, c.ObservedGeneration, tc.wantGen)
				}
			}
			if tc.es.Status.ObservedGeneration != 0 {
				t.Errorf("status.observedGeneration %d: it is writeStatus's to set", tc.es.Status.ObservedGeneration)
			}
		})
	}
}

// TestObserve: status.observedGeneration moves with a status that changes,
// and alone never causes a write.
func TestObserve(t *testing.T) {
	for name, tc := range map[string]struct {
		before, after func(*esv1.ExternalSecret)
		want          int64
	}{
		"changed":                              {after: func(es *esv1.ExternalSecret) { setReady(es, metav1.ConditionTrue, esv1.ReasonSecretSynced, "") }, want: 3},
		"unchanged":                            {before: func(es *esv1.ExternalSecret) { es.Status.ObservedGeneration = 3 }, want: 3},
		"unchanged, written by an earlier eso": {want: 0},
		"unchanged, cache behind eso's write":  {before: func(es *esv1.ExternalSecret) { es.Status.ObservedGeneration = 2 }, want: 2},
	} {
		t.Run(name, func(t *testing.T) {
			es := stepES(func(es *esv1.ExternalSecret) {
				es.Generation = 2
				setReady(es, metav1.ConditionTrue, esv1.ReasonSecretSynced, "x")
				es.Generation = 3
			})
			if tc.before != nil {
				tc.before(es)
			}
			before := es.Status.DeepCopy()
			if tc.after != nil {
				tc.after(es)
			}
			observe(es, before)
			if es.Status.ObservedGeneration != tc.want {
				t.Errorf("status.observedGeneration %d, want %d", es.Status.ObservedGeneration, tc.want)
			}
		})
	}
}

// applyReconciler is a Reconciler whose API server is a fake holding objs.
func applyReconciler(t *testing.T, objs ...client.Object) *Reconciler {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := esv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := ctrlfake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
	return &Reconciler{Client: c, APIReader: c, Recorder: record.NewFakeRecorder(10), Now: func() time.Time { return t0 },
		Scheduler: refresh.NewScheduler()}
}

func TestApplyStep(t *testing.T) {
	gone := fmt.Errorf("data[0]: %w", plugin.ErrSecretNotFound)
	cases := map[string]struct {
		policy     esv1.DeletionPolicy
		fetched    fetchResult
		withTarget bool
		wantErr    error
		wantReason string
		wantData   map[string]string // nil: no target Secret afterwards
	}{
		"retain, a secret gone": {policy: esv1.DeletionPolicyRetain, fetched: fetchResult{data: map[string][]byte{"a": []byte("1")}, gone: gone},
			withTarget: true, wantErr: plugin.ErrSecretNotFound, wantData: map[string]string{"old": "v"}},
		"retain, nothing found": {policy: esv1.DeletionPolicyRetain, fetched: fetchResult{data: map[string][]byte{}},
			withTarget: true, wantReason: esv1.ReasonSecretSynced, wantData: map[string]string{"old": "v"}},
		"delete, nothing found": {policy: esv1.DeletionPolicyDelete, fetched: fetchResult{data: map[string][]byte{}, gone: gone},
			withTarget: true, wantReason: esv1.ReasonSecretDeleted},
		"written": {policy: esv1.DeletionPolicyRetain, fetched: fetchResult{data: map[string][]byte{"a": []byte("1")}},
			wantReason: esv1.ReasonSecretSynced, wantData: map[string]string{"a": "1"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			es := stepES(func(es *esv1.ExternalSecret) { es.Spec.Target.DeletionPolicy = tc.policy })
			var objs []client.Object
			var target *corev1.Secret
			if tc.withTarget {
				target = ownedTarget(es)
				target.Labels = map[string]string{esv1.LabelManaged: esv1.LabelManagedValue}
				target.OwnerReferences = []metav1.OwnerReference{{APIVersion: esv1.GroupVersion.String(), Kind: "ExternalSecret",
					Name: es.Name, UID: es.UID, Controller: new(true)}}
				target.Data = map[string][]byte{"old": []byte("v")}
				objs = append(objs, target)
			}
			r := applyReconciler(t, append(objs, es)...)
			sc := &syncScope{es: es, target: target, now: t0, fetched: tc.fetched}
			_, err := r.apply(context.Background(), sc)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if c := syncedCondition(es); tc.wantReason != "" && (c == nil || c.Reason != tc.wantReason) {
				t.Errorf("Synced %+v, want reason %s", c, tc.wantReason)
			}
			var s corev1.Secret
			err = r.Client.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: es.TargetName()}, &s)
			switch {
			case tc.wantData == nil && err == nil:
				t.Errorf("the target still exists: %v", s.Data)
			case tc.wantData != nil && err != nil:
				t.Errorf("the target is gone: %v", err)
			case tc.wantData != nil:
				for k, v := range tc.wantData {
					if string(s.Data[k]) != v || len(s.Data) != len(tc.wantData) {
						t.Errorf("target data %q, want %v", s.Data, tc.wantData)
					}
				}
			}
		})
	}
}

// TestLoadTargetStep: the target as read decides whether eso may write it,
// before the provider is asked anything.
func TestLoadTargetStep(t *testing.T) {
	es := stepES(nil)
	secret := func(mutate func(*corev1.Secret)) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: es.TargetName()}}
		mutate(s)
		return s
	}
	controlledBy := func(uid string) func(*corev1.Secret) {
		return func(s *corev1.Secret) {
			s.OwnerReferences = []metav1.OwnerReference{{APIVersion: esv1.GroupVersion.String(), Kind: "ExternalSecret",
				Name: "app", UID: types.UID(uid), Controller: new(true)}}
		}
	}
	cases := map[string]struct {
		policy   esv1.CreationPolicy
		target   *corev1.Secret
		reported bool // Ready already says SecretMissing for this generation
		wantErr  error
		wantEnd  end
	}{
		"missing, owner creates it":              {policy: esv1.CreatePolicyOwner},
		"missing, merge reads the provider once": {policy: esv1.CreatePolicyMerge, wantEnd: next},
		"missing, merge already reported":        {policy: esv1.CreatePolicyMerge, reported: true, wantEnd: endWaiting},
		"eso's own":                              {policy: esv1.CreatePolicyOwner, target: secret(controlledBy("uid-1"))},
		"another ExternalSecret's":               {policy: esv1.CreatePolicyOwner, target: secret(controlledBy("uid-2")), wantErr: errTargetConflict},
		"the user's, not taken over":             {policy: esv1.CreatePolicyOwner, target: secret(func(*corev1.Secret) {}), wantErr: errTargetConflict},
		"the user's, merged into":                {policy: esv1.CreatePolicyMerge, target: secret(func(*corev1.Secret) {})},
		"a token Secret, never merged":           {policy: esv1.CreatePolicyMerge, target: secret(func(s *corev1.Secret) { s.Type = corev1.SecretTypeServiceAccountToken }), wantErr: errTargetConflict},
		"creation policy None, not read":         {policy: esv1.CreatePolicyNone, target: secret(controlledBy("uid-2"))},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			es := stepES(func(es *esv1.ExternalSecret) { es.Spec.Target.CreationPolicy = tc.policy })
			if tc.reported {
				setMissing(es)
			}
			var objs []client.Object
			if tc.target != nil {
				objs = append(objs, tc.target)
			}
			r := applyReconciler(t, objs...)
			sc := &syncScope{es: es}
			got, err := r.loadTarget(context.Background(), sc)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if got != tc.wantEnd {
				t.Fatalf("end %v, want %v", got, tc.wantEnd)
			}
			if tc.policy == esv1.CreatePolicyMerge && tc.target == nil && !tc.reported && !sc.mergeMissing {
				t.Error("a missing Merge target does not go on to read the provider")
			}
			if tc.wantEnd == endWaiting {
				// Upstream: Ready=True, SecretMissing; the target's arrival is awaited.
				if c := readyCondition(es); c == nil || c.Status != metav1.ConditionTrue || c.Reason != esv1.ReasonSecretMissing {
					t.Errorf("Ready %+v, want True/SecretMissing", c)
				}
				if obj, ok := plugin.AwaitedObject(sc.awaiting); !ok || obj.Name != es.TargetName() || obj.Kind != "Secret" {
					t.Errorf("awaits %+v, want the target Secret", obj)
				}
			}
			if tc.policy == esv1.CreatePolicyNone && sc.target != nil {
				t.Error("creationPolicy None read the target")
			}
		})
	}
}

// TestRepairsArePaced: a target someone keeps undoing is repaired at once
// the first time, then at most every minRepairGap, never in a loop.
func TestRepairsArePaced(t *testing.T) {
	r := &Reconciler{}
	es := stepES(func(es *esv1.ExternalSecret) { synced(t0.Add(-time.Minute))(es) })
	edited := &corev1.Secret{Data: map[string][]byte{"a": []byte("edited")}}
	if due, _, _ := r.syncDue(es, targetValid(es, edited), "", t0); !due {
		t.Fatal("first repair not due")
	}
	due, wait, _ := r.syncDue(es, targetValid(es, edited), "", t0.Add(time.Second))
	if due || wait <= 0 || wait > minRepairGap {
		t.Fatalf("second repair a second later: due %v, wait %v", due, wait)
	}
	if due, _, _ := r.syncDue(es, targetValid(es, edited), "", t0.Add(minRepairGap)); !due {
		t.Fatal("repair not due after the gap")
	}
}

// TestMergingAnswersForItsOwnKeys: an ExternalSecret merging into a Secret
// repairs its own keys, not the owner's or another ExternalSecret's.
func TestMergingAnswersForItsOwnKeys(t *testing.T) {
	es := stepES(func(es *esv1.ExternalSecret) { es.Spec.Target.CreationPolicy = esv1.CreatePolicyMerge })
	target := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{}},
		Data: map[string][]byte{"mine": []byte("1"), "theirs": []byte("x")}}
	target.Annotations[mergedKeysAnnotation(es)] = "mine"
	target.Annotations[mergedDigestAnnotation(es)] = dataHash(map[string][]byte{"mine": []byte("1")})
	if drifted(es, target) {
		t.Fatal("drifted before any edit")
	}
	target.Data["theirs"] = []byte("changed")
	if drifted(es, target) {
		t.Error("the owner's key changing counts as this ExternalSecret's drift")
	}
	target.Data["mine"] = []byte("changed")
	if !drifted(es, target) {
		t.Error("its own key changing is not drift")
	}
	delete(target.Data, "mine")
	if !drifted(es, target) {
		t.Error("its own key removed is not drift")
	}
}
