package generatorstate

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	genv2 "github.com/eso-dev/eso/apis/generator/v2alpha1"
)

// TestStateLifecycle: a signed state is kept while in use, waits for its
// deadline, is kept when its target still lists it, and is revoked and
// deleted once due and unused, or revoked when deleted.
func TestStateLifecycle(t *testing.T) {
	cases := map[string]struct {
		deadline    func(now time.Time) *metav1.Time
		listed      bool
		deleting    bool
		wantRevoked bool
		wantGone    bool
		wantRequeue time.Duration
		wantNoDL    bool // the deadline was cleared
	}{
		"in use":              {deadline: func(time.Time) *metav1.Time { return nil }},
		"before its deadline": {deadline: func(now time.Time) *metav1.Time { return &metav1.Time{Time: now.Add(time.Hour)} }, wantRequeue: time.Hour},
		"due, target lists it": {deadline: func(now time.Time) *metav1.Time { return &metav1.Time{Time: now.Add(-time.Minute)} },
			listed: true, wantNoDL: true},
		"due, unused": {deadline: func(now time.Time) *metav1.Time { return &metav1.Time{Time: now.Add(-time.Minute)} },
			wantRevoked: true, wantGone: true},
		"deleted": {deadline: func(time.Time) *metav1.Time { return nil }, deleting: true, wantRevoked: true, wantGone: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			es := &esv1.ExternalSecret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "app"}}
			target := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "app"}}
			if tc.listed {
				target.Annotations = map[string]string{genv2.AnnotationStates: "other,s"}
			}
			f := newFixture(t, es, target)
			now := f.r.Now()
			f.deadline = now
			st := f.state(t, "s", true)
			st.Spec.GarbageCollectionDeadline = tc.deadline(now)
			if err := f.client.Update(context.Background(), st); err != nil {
				t.Fatal(err)
			}
			if tc.deleting {
				if err := f.client.Delete(context.Background(), st); err != nil {
					t.Fatal(err)
				}
			}
			res, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(st)})
			if err != nil {
				t.Fatal(err)
			}
			if res.RequeueAfter != tc.wantRequeue {
				t.Errorf("requeue after %v, want %v", res.RequeueAfter, tc.wantRequeue)
			}
			if got := len(f.rec.revoked) > 0; got != tc.wantRevoked {
				t.Errorf("revoked %v, want %v", f.rec.revoked, tc.wantRevoked)
			}
			var now2 genv2.GeneratorState
			err = f.client.Get(context.Background(), client.ObjectKeyFromObject(st), &now2)
			switch {
			case tc.wantGone && !apierrors.IsNotFound(err):
				t.Errorf("the state is still there: %v", err)
			case !tc.wantGone && err != nil:
				t.Errorf("the state is gone: %v", err)
			case !tc.wantGone && tc.wantNoDL && now2.Spec.GarbageCollectionDeadline != nil:
				t.Error("a state its target still lists kept its deadline")
			}
		})
	}
}
