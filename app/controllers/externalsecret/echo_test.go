package externalsecret

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlfake "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/manager"
	"github.com/eso-dev/eso/app/refresh"
	"github.com/eso-dev/eso/app/stores"
)

// TestEchoesOwnWrite: a Secret event is dropped only when it brings back
// the very Secret and version this process recorded for the ExternalSecret
// of its name, and no other ExternalSecret targets it. Every other event
// (a version or a Secret eso did not record, a trimmed cache entry, a
// second writer) still reconciles.
func TestEchoesOwnWrite(t *testing.T) {
	const ns = "tenant"
	record := verifiedTarget{es: "es-uid", targetRecord: targetRecord{name: "app", resourceVersion: "7", uid: "secret-uid"}}
	other := &esv1.ExternalSecret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "other"},
		Spec: esv1.ExternalSecretSpec{Target: esv1.ExternalSecretTarget{Name: "app"}}}
	cases := map[string]struct {
		record *verifiedTarget
		secret func(*metav1.PartialObjectMetadata)
		others []client.Object
		want   bool
	}{
		"the version eso wrote":             {record: &record, want: true},
		"no record":                         {},
		"another version":                   {record: &record, secret: func(m *metav1.PartialObjectMetadata) { m.ResourceVersion = "8" }},
		"a Secret recreated under the name": {record: &record, secret: func(m *metav1.PartialObjectMetadata) { m.UID = "new-uid" }},
		"the record is of another target":   {record: &verifiedTarget{targetRecord: targetRecord{name: "elsewhere", resourceVersion: "7", uid: "secret-uid"}}},
		"the cache trimmed it": {record: &record, secret: func(m *metav1.PartialObjectMetadata) {
			m.Annotations = map[string]string{manager.AnnotationCacheTrimmed: "true"}
		}},
		"another ExternalSecret targets it": {record: &record, others: []client.Object{other}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			if err := esv1.AddToScheme(scheme); err != nil {
				t.Fatal(err)
			}
			c := ctrlfake.NewClientBuilder().WithScheme(scheme).WithObjects(tc.others...).
				WithIndex(&esv1.ExternalSecret{}, indexTarget, targetIndex).Build()
			r := &Reconciler{Client: c}
			if tc.record != nil {
				r.verified.Store(types.NamespacedName{Namespace: ns, Name: "app"}, *tc.record)
			}
			s := manager.NewSecretMetadata()
			s.ObjectMeta = metav1.ObjectMeta{Namespace: ns, Name: "app", UID: "secret-uid", ResourceVersion: "7"}
			if tc.secret != nil {
				tc.secret(s)
			}
			if got := r.echoesOwnWrite(s); got != tc.want {
				t.Errorf("echoesOwnWrite = %v, want %v", got, tc.want)
			}
			// The watch's filter drops the echo's creation and update, and
			// never a deletion.
			p := r.notOwnWrites()
			if p.Create(event.CreateEvent{Object: s}) == tc.want || p.Update(event.UpdateEvent{ObjectOld: s, ObjectNew: s}) == tc.want {
				t.Errorf("the filter passes creation or update wrongly (want them passed: %v)", !tc.want)
			}
			if !p.Delete(event.DeleteEvent{Object: s}) {
				t.Error("the filter dropped a deletion")
			}
		})
	}
}

// TestStoreEventsRequeue: a store found Ready for the first time requeues
// only its ExternalSecrets that are not Ready; any other change of its
// Ready condition, and its creation, requeue all of them.
func TestStoreEventsRequeue(t *testing.T) {
	const ns = "tenant"
	using := func(name string, ready metav1.ConditionStatus) client.Object {
		es := &esv1.ExternalSecret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: esv1.ExternalSecretSpec{SecretStoreRef: &esv1.SecretStoreRef{Name: "store", Kind: stores.KindSecretStore},
				Data: []esv1.ExternalSecretData{{SecretKey: "k", RemoteRef: esv1.ExternalSecretDataRemoteRef{Key: "k"}}}}}
		if ready != "" {
			es.Status.Conditions = []metav1.Condition{{Type: esv1.ConditionReady, Status: ready}}
		}
		return es
	}
	store := func(status metav1.ConditionStatus) *ssv2.SecretStore {
		s := &ssv2.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "store", Generation: 1}}
		if status != "" {
			s.Status.Conditions = []metav1.Condition{{Type: ssv2.ConditionReady, Status: status, ObservedGeneration: 1}}
		}
		return s
	}
	scheme := runtime.NewScheme()
	if err := esv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := ctrlfake.NewClientBuilder().WithScheme(scheme).
		WithObjects(using("synced", metav1.ConditionTrue), using("failed", metav1.ConditionFalse), using("new", "")).
		WithIndex(&esv1.ExternalSecret{}, indexStore, storeIndex).Build()
	h := (&Reconciler{Client: c}).storeEvents(stores.V2APIs[0])

	queued := func(send func(workqueue.TypedRateLimitingInterface[reconcile.Request])) []string {
		q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
		defer q.ShutDown()
		send(q)
		var names []string
		for q.Len() > 0 {
			req, _ := q.Get()
			names = append(names, req.Name)
			q.Done(req)
		}
		slices.Sort(names)
		return names
	}
	update := func(old, updated *ssv2.SecretStore) []string {
		return queued(func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Update(context.Background(), event.UpdateEvent{ObjectOld: old, ObjectNew: updated}, q)
		})
	}
	all := []string{"failed", "new", "synced"}
	if got := update(store(""), store(metav1.ConditionTrue)); !slices.Equal(got, []string{"failed", "new"}) {
		t.Errorf("found Ready: requeued %v, want the two not Ready", got)
	}
	if got := update(store(""), store(metav1.ConditionFalse)); !slices.Equal(got, all) {
		t.Errorf("found not Ready: requeued %v, want %v", got, all)
	}
	if got := update(store(metav1.ConditionFalse), store(metav1.ConditionTrue)); !slices.Equal(got, all) {
		t.Errorf("Ready again: requeued %v, want %v", got, all)
	}
	created := queued(func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		h.Create(context.Background(), event.CreateEvent{Object: store("")}, q)
	})
	if !slices.Equal(created, all) {
		t.Errorf("created: requeued %v, want %v", created, all)
	}
}

// TestEchoDuringTheWrite: a Secret event that arrives while eso's write of
// it is in flight is held back; once the write returns, nothing more
// happens if it was of the version written, and the ExternalSecret is
// requeued if it was of another version (someone else's change) or the
// write failed.
func TestEchoDuringTheWrite(t *testing.T) {
	const ns = "tenant"
	es := &esv1.ExternalSecret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app", UID: "es-uid"}}
	secret := func(name, rv string) *metav1.PartialObjectMetadata {
		s := manager.NewSecretMetadata()
		s.ObjectMeta = metav1.ObjectMeta{Namespace: ns, Name: name, UID: "secret-uid", ResourceVersion: rv}
		return s
	}
	cases := map[string]struct {
		target  string
		events  []string // versions of the Secret "app" seen during the write
		written string
		held    bool // the events were dropped by the watch
		requeue bool
	}{
		"the echo of the write":            {target: "app", events: []string{"9"}, written: "9", held: true},
		"another version during the write": {target: "app", events: []string{"9", "10"}, written: "9", held: true, requeue: true},
		"an event before a failed write":   {target: "app", events: []string{"9"}, written: "", held: true, requeue: true},
		"the echo seen more than once":     {target: "app", events: []string{"9", "9", "9", "9", "9"}, written: "9", held: true},
		"only another version":             {target: "app", events: []string{"10"}, written: "9", held: true, requeue: true},
		"two other versions":               {target: "app", events: []string{"10", "11"}, written: "9", held: true, requeue: true},
		"a write of another Secret":        {target: "elsewhere", events: []string{"9"}, written: "9"},
		"no event during the write":        {target: "app", written: "9"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			if err := esv1.AddToScheme(scheme); err != nil {
				t.Fatal(err)
			}
			c := ctrlfake.NewClientBuilder().WithScheme(scheme).
				WithIndex(&esv1.ExternalSecret{}, indexTarget, targetIndex).Build()
			r := &Reconciler{Client: c, Scheduler: refresh.NewScheduler()}
			q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
			defer q.ShutDown()
			if err := r.Scheduler.Source().Start(context.Background(), q); err != nil {
				t.Fatal(err)
			}
			done := r.writingTarget(es, tc.target)
			w, _ := r.writes.Load(types.NamespacedName{Namespace: ns, Name: "app"})
			for _, rv := range tc.events {
				if got := r.echoesOwnWrite(secret("app", rv)); got != tc.held {
					t.Errorf("event of version %s: held back %v, want %v", rv, got, tc.held)
				}
			}
			done(tc.written)
			if got := q.Len() == 1; got != tc.requeue {
				t.Errorf("requeued %v, want %v", got, tc.requeue)
			}
			if r.echoesOwnWrite(secret("app", "11")) {
				t.Error("an event after the write returned was held back")
			}
			// The watch may have looked the write up just before it
			// returned: the event is passed, not held by a write judged.
			if w.(*targetWrite).holdBack("12") {
				t.Error("a write that returned held an event back")
			}
			done("12") // only the first call counts
			if q.Len() > 1 {
				t.Error("a second call of done requeued again")
			}
		})
	}
}
