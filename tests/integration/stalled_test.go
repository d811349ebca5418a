package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/metrics"
)

// kstatusOf is what kstatus (Flux, kpt) makes of obj as the API server has it.
func kstatusOf(t *testing.T, obj client.Object) *status.Result {
	t.Helper()
	return kstatus(t, readBack(t, obj))
}

// kstatusAsIs is what kstatus makes of obj as it is in hand: an API
// server's answer to a write, say, which eso cannot have reconciled yet.
func kstatusAsIs(t *testing.T, obj client.Object) *status.Result {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvkOf(t, obj))
	return kstatus(t, u)
}

func kstatus(t *testing.T, u *unstructured.Unstructured) *status.Result {
	t.Helper()
	res, err := status.Compute(u)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestStalledUntilEdited: an ExternalSecret whose template does not parse
// says Stalled=True, so kstatus reads it as Failed at once instead of a
// rollout waiting for its timeout, and eso writes its status once, not per
// reconcile; the edit that fixes the template is InProgress until eso has
// looked at it (status.observedGeneration lags: the stall describes the
// generation before, so Flux does not fail the rollout that brings the
// fix), then syncs, and Stalled goes (kstatus: Current). An ExternalSecret
// whose store does not exist yet is no stall: it converges when the store
// arrives, whatever the order of apply.
func TestStalledUntilEdited(t *testing.T) {
	runEso(t, testConfig())
	ctx := context.Background()
	ns := env.Namespace(t, "stalled", nil)
	create(t, fakeConfig(ns, "fake", map[string]string{"db": "s3cr3t"}), secretStore(ns, "fake", storeSpec("Fake", "fake", "")))
	broken := templated(ns, "broken", map[string]string{"password": "db"}, map[string]string{"password": "{{ .password "})
	early := externalSecret(ns, "early", "SecretStore", "later", map[string]esv1.ExternalSecretDataRemoteRef{"password": ref("db", "")})
	create(t, broken, early)

	var stalled *metav1.Condition
	eventually(t, "ExternalSecret broken Stalled=True", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(broken), broken); err != nil {
			return err
		}
		if stalled = meta.FindStatusCondition(broken.Status.Conditions, esv1.ConditionStalled); stalled == nil || stalled.Status != metav1.ConditionTrue {
			return fmt.Errorf("Stalled: %+v", stalled)
		}
		return nil
	})
	synced := meta.FindStatusCondition(broken.Status.Conditions, esv1.ConditionSynced)
	if stalled.Reason != esv1.ReasonTemplateError || stalled.ObservedGeneration != broken.Generation ||
		synced == nil || stalled.Message != synced.Message || !strings.Contains(stalled.Message, "data.password") {
		t.Errorf("Stalled = %+v, Synced = %+v; want TemplateError at generation %d with Synced's message", stalled, synced, broken.Generation)
	}
	if broken.Generation != 1 || broken.Status.ObservedGeneration != broken.Generation {
		t.Errorf("generation %d, status.observedGeneration %d; want 1 and 1", broken.Generation, broken.Status.ObservedGeneration)
	}
	if res := kstatusOf(t, broken); res.Status != status.FailedStatus || !strings.Contains(res.Message, "template error") {
		t.Errorf("kstatus of the stalled ExternalSecret: %s (%s), want Failed", res.Status, res.Message)
	}

	// The store that does not exist yet is no stall.
	waitReady(t, early, metav1.ConditionFalse, esv1.ReasonStoreNotFound)
	if c := meta.FindStatusCondition(early.Status.Conditions, esv1.ConditionStalled); c != nil {
		t.Errorf("an ExternalSecret waiting for its store stalled: %+v", c)
	}
	if res := kstatusOf(t, early); res.Status != status.InProgressStatus {
		t.Errorf("kstatus of an ExternalSecret waiting for its store: %s (%s), want InProgress", res.Status, res.Message)
	}

	// Stalled, it is written once: a reconcile finds the same stall and
	// writes nothing. An annotation edit makes eso reconcile it (and try
	// the sync again, counted in externalsecret_sync_calls_error); it is
	// done twice, each waited for until eso's try has begun: eso
	// reconciles one object at a time, so once the second try has begun
	// the first has ended, with whatever it wrote. The edits come a second
	// after the stall was recorded, so a condition set again would show a
	// later time; a write that changes nothing shows in the count of
	// status writes (no other ExternalSecret of this test has anything to
	// write meanwhile).
	stalledStatus := broken.Status.DeepCopy()
	eventually(t, "a second to pass since the stall was recorded", func() error {
		if since := time.Since(stalled.LastTransitionTime.Time); since <= time.Second {
			return fmt.Errorf("%v since", since)
		}
		return nil
	})
	tries := func() float64 { return metrics.SyncErrors.Value(broken.Name, ns) }
	statusWrites := func() float64 { return testutil.ToFloat64(metrics.StatusWrites.WithLabelValues("ExternalSecret")) }
	writesBefore := statusWrites()
	for i := range 2 {
		before := tries()
		patch := client.MergeFrom(broken.DeepCopy())
		metav1.SetMetaDataAnnotation(&broken.ObjectMeta, "example.com/reconcile", fmt.Sprint(i))
		if err := env.Client.Patch(ctx, broken, patch); err != nil {
			t.Fatal(err)
		}
		eventually(t, fmt.Sprintf("eso to try the stalled ExternalSecret again (annotation edit %d)", i+1), func() error {
			if n := tries(); n <= before {
				return fmt.Errorf("%v failed syncs, as before the edit", n)
			}
			return nil
		})
	}
	var now esv1.ExternalSecret
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(broken), &now); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(now.Status, *stalledStatus) {
		t.Errorf("a reconcile of the stalled ExternalSecret wrote its status again:\n now %+v\n was %+v", now.Status, *stalledStatus)
	}
	if n := statusWrites() - writesBefore; n != 0 {
		t.Errorf("reconciling the stalled ExternalSecret made %v status writes, want none", n)
	}

	// The edit that fixes it, as the API server answers it: eso has not
	// looked at it yet, so the stall is of the generation before and
	// kstatus says InProgress, not Failed.
	patch := client.MergeFrom(broken.DeepCopy())
	broken.Spec.Target.Template.Data["password"] = "{{ .password }}"
	if err := env.Client.Patch(ctx, broken, patch); err != nil {
		t.Fatal(err)
	}
	if meta.FindStatusCondition(broken.Status.Conditions, esv1.ConditionStalled) == nil || broken.Generation != 2 {
		t.Fatalf("the edit's answer: generation %d, conditions %+v; want generation 2, still stalled", broken.Generation, broken.Status.Conditions)
	}
	if res := kstatusAsIs(t, broken); res.Status != status.InProgressStatus {
		t.Errorf("kstatus of the edited ExternalSecret before eso looked: %s (%s), want InProgress", res.Status, res.Message)
	}
	waitReady(t, broken, metav1.ConditionTrue, esv1.ReasonSecretSynced)
	if c := meta.FindStatusCondition(broken.Status.Conditions, esv1.ConditionStalled); c != nil {
		t.Errorf("Stalled after the fix: %+v", c)
	}
	if broken.Status.ObservedGeneration != broken.Generation {
		t.Errorf("after the fix: status.observedGeneration %d, generation %d", broken.Status.ObservedGeneration, broken.Generation)
	}
	if res := kstatusOf(t, broken); res.Status != status.CurrentStatus {
		t.Errorf("kstatus after the fix: %s (%s), want Current", res.Status, res.Message)
	}
	waitSecretData(t, ns, "broken", map[string]string{"password": "s3cr3t"})

	// The store arrives: the other converges without an edit.
	create(t, secretStore(ns, "later", storeSpec("Fake", "fake", "")))
	waitReady(t, early, metav1.ConditionTrue, esv1.ReasonSecretSynced)
	waitSecretData(t, ns, "early", map[string]string{"password": "s3cr3t"})
}
