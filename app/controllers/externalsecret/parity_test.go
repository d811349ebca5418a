package externalsecret

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/providers/plugin"
)

// The controller parity tables: upstream External Secrets Operator's
// ExternalSecret decisions (v2.9.0), one row each, run through eso's own
// decision and apply steps. Rows are written from upstream's controller and
// its documentation (docs/guides/ownership-deletion-policy.md,
// docs/api/externalsecret.md); each group cites the upstream lines it
// follows. Where eso deliberately differs, the row says so in differs and
// the README's "Differences from upstream ESO" explains why.

// decisionRow is one refresh decision: whether the provider is read now.
type decisionRow struct {
	policy   esv1.RefreshPolicy
	interval time.Duration // 0: refreshInterval 0
	creation esv1.CreationPolicy
	// syncedAgo: when the last success was; 0 means never synced.
	syncedAgo time.Duration
	// changed: what changed since that success.
	changed string // "", "spec", "annotation", "label"
	// target: "valid", "missing", "data edited", "labels edited".
	target   string
	wantRead bool
}

func TestParityRefreshDecision(t *testing.T) {
	const hour = time.Hour
	rows := map[string]decisionRow{
		// shouldRefreshPeriodic: pkg/controllers/externalsecret/externalsecret_controller.go:1249-1279
		"periodic, never synced":            {interval: hour, target: "missing", wantRead: true},
		"periodic, synced 10m ago":          {interval: hour, syncedAgo: 10 * time.Minute, target: "valid"},
		"periodic, interval passed":         {interval: hour, syncedAgo: 2 * hour, target: "valid", wantRead: true},
		"periodic, spec edited":             {interval: hour, syncedAgo: 10 * time.Minute, changed: "spec", target: "valid", wantRead: true},
		"periodic, force-sync annotation":   {interval: hour, syncedAgo: 10 * time.Minute, changed: "annotation", target: "valid", wantRead: true},
		"periodic, label added":             {interval: hour, syncedAgo: 10 * time.Minute, changed: "label", target: "valid", wantRead: true},
		"interval 0, never synced":          {target: "missing", wantRead: true},
		"interval 0, spec edited":           {syncedAgo: 48 * hour, changed: "spec", target: "valid"},
		"interval 0, force-sync annotation": {syncedAgo: 48 * hour, changed: "annotation", target: "valid"},
		"interval 0, a day later":           {syncedAgo: 48 * hour, target: "valid"},
		// shouldRefresh for CreatedOnce and OnChange: externalsecret_controller.go:1226-1247
		"created once, never synced":     {policy: esv1.RefreshPolicyCreatedOnce, target: "missing", wantRead: true},
		"created once, spec edited":      {policy: esv1.RefreshPolicyCreatedOnce, syncedAgo: 48 * hour, changed: "spec", target: "valid"},
		"created once, annotation added": {policy: esv1.RefreshPolicyCreatedOnce, syncedAgo: 48 * hour, changed: "annotation", target: "valid"},
		"on change, nothing changed":     {policy: esv1.RefreshPolicyOnChange, syncedAgo: 48 * hour, target: "valid"},
		"on change, spec edited":         {policy: esv1.RefreshPolicyOnChange, syncedAgo: 48 * hour, changed: "spec", target: "valid", wantRead: true},
		"on change, annotation added":    {policy: esv1.RefreshPolicyOnChange, syncedAgo: 48 * hour, changed: "annotation", target: "valid", wantRead: true},
		// isSecretValid, consulted only when no refresh is due:
		// externalsecret_controller.go:372, 1282-1304; docs/guides/ownership-deletion-policy.md
		"interval 0, owner target deleted":           {syncedAgo: hour, target: "missing", wantRead: true},
		"interval 0, owner target data edited":       {syncedAgo: hour, target: "data edited", wantRead: true},
		"interval 0, owner target labels edited":     {syncedAgo: hour, target: "labels edited"},
		"interval 0, orphan target deleted":          {creation: esv1.CreatePolicyOrphan, syncedAgo: hour, target: "missing"},
		"interval 0, orphan target data edited":      {creation: esv1.CreatePolicyOrphan, syncedAgo: hour, target: "data edited"},
		"interval 0, merge target deleted":           {creation: esv1.CreatePolicyMerge, syncedAgo: hour, target: "missing", wantRead: true},
		"interval 0, merge target data replaced":     {creation: esv1.CreatePolicyMerge, syncedAgo: hour, target: "data edited", wantRead: true},
		"interval 0, create-or-merge target deleted": {creation: esv1.CreatePolicyCreateOrMerge, syncedAgo: hour, target: "missing", wantRead: true},
		"created once, owner target deleted":         {policy: esv1.RefreshPolicyCreatedOnce, syncedAgo: hour, target: "missing", wantRead: true},
		"created once, orphan target deleted":        {policy: esv1.RefreshPolicyCreatedOnce, creation: esv1.CreatePolicyOrphan, syncedAgo: hour, target: "missing"},
		"created once, owner target data edited":     {policy: esv1.RefreshPolicyCreatedOnce, syncedAgo: hour, target: "data edited", wantRead: true},
		"on change, owner target deleted":            {policy: esv1.RefreshPolicyOnChange, syncedAgo: hour, target: "missing", wantRead: true},
		"periodic, orphan target deleted, not due":   {interval: hour, creation: esv1.CreatePolicyOrphan, syncedAgo: 10 * time.Minute, target: "missing"},
		"periodic, orphan target deleted, due":       {interval: hour, creation: esv1.CreatePolicyOrphan, syncedAgo: 2 * hour, target: "missing", wantRead: true},
		"creation none, no target":                   {interval: hour, creation: esv1.CreatePolicyNone, syncedAgo: 10 * time.Minute, target: "missing"},
	}
	for name, row := range rows {
		t.Run(name, func(t *testing.T) {
			r := &Reconciler{Now: func() time.Time { return t0 }}
			es := stepES(func(es *esv1.ExternalSecret) {
				es.Spec.RefreshPolicy = row.policy
				es.Spec.RefreshInterval = &metav1.Duration{Duration: row.interval}
				es.Spec.Target.CreationPolicy = row.creation
			})
			if row.syncedAgo > 0 {
				synced(t0.Add(-row.syncedAgo))(es)
			}
			switch row.changed {
			case "spec":
				es.Generation++
			case "annotation":
				es.Annotations = map[string]string{"force-sync": "1"}
			case "label":
				es.Labels = map[string]string{"team": "a"}
			}
			var target *corev1.Secret
			switch row.target {
			case "valid":
				target = writtenTarget()
			case "data edited":
				target = writtenTarget()
				if es.Spec.Target.Merges() {
					// A merging ExternalSecret answers for its own keys.
					target.Annotations[mergedKeysAnnotation(es)] = "a"
					target.Annotations[mergedDigestAnnotation(es)] = dataHash(target.Data)
				}
				target.Data = map[string][]byte{"a": []byte("edited")}
			case "labels edited":
				target = writtenTarget()
				target.Labels = map[string]string{"someone": "else"}
			}
			read, _, _ := r.syncDue(es, targetValid(es, target), "", t0)
			if read != row.wantRead {
				t.Errorf("provider read = %v, want %v", read, row.wantRead)
			}
		})
	}
}

// outcomeRow is one outcome of a sync whose provider answered: the target
// Secret's fate and the Ready condition.
type outcomeRow struct {
	deletion esv1.DeletionPolicy
	creation esv1.CreationPolicy
	// remote: "data" (a key), "all gone", "find empty", "one gone".
	remote     string
	withTarget bool
	wantTarget string // "written", "deleted", "kept", "emptied", "absent"
	wantReady  metav1.ConditionStatus
	wantReason string
	// differs says why eso deliberately does otherwise than upstream.
	differs string
}

func TestParitySyncOutcome(t *testing.T) {
	rows := map[string]outcomeRow{
		// The deletion-policy switch: externalsecret_controller.go:417-458;
		// docs/guides/ownership-deletion-policy.md:88-100.
		"retain, data":                     {remote: "data", withTarget: true, wantTarget: "written", wantReady: metav1.ConditionTrue, wantReason: esv1.ReasonSecretSynced},
		"retain, a key gone":               {remote: "one gone", withTarget: true, wantTarget: "kept", wantReady: metav1.ConditionFalse, wantReason: esv1.ReasonSecretSyncedError},
		"retain, find matched nothing":     {remote: "find empty", withTarget: true, wantTarget: "kept", wantReady: metav1.ConditionTrue, wantReason: esv1.ReasonSecretSynced},
		"retain, find nothing, no target":  {remote: "find empty", wantTarget: "absent", wantReady: metav1.ConditionTrue, wantReason: esv1.ReasonSecretSynced},
		"delete, all gone, owned target":   {deletion: esv1.DeletionPolicyDelete, remote: "all gone", withTarget: true, wantTarget: "deleted", wantReady: metav1.ConditionTrue, wantReason: esv1.ReasonSecretDeleted},
		"delete, keys never existed":       {deletion: esv1.DeletionPolicyDelete, remote: "all gone", wantTarget: "absent", wantReady: metav1.ConditionTrue, wantReason: esv1.ReasonSecretDeleted},
		"delete, one of two gone":          {deletion: esv1.DeletionPolicyDelete, remote: "one gone", withTarget: true, wantTarget: "written", wantReady: metav1.ConditionTrue, wantReason: esv1.ReasonSecretSynced},
		"merge policy, all gone":           {deletion: esv1.DeletionPolicyMerge, remote: "all gone", withTarget: true, wantTarget: "emptied", wantReady: metav1.ConditionTrue, wantReason: esv1.ReasonSecretSynced},
		"delete, orphan target, all gone":  {deletion: esv1.DeletionPolicyDelete, creation: esv1.CreatePolicyOrphan, remote: "all gone", withTarget: true, wantTarget: "deleted", wantReady: metav1.ConditionTrue, wantReason: esv1.ReasonSecretDeleted, differs: "upstream refuses (Ready=False) to delete a Secret it does not own; eso deletes the Secret it created and marked as its own, as the policy asks"},
		"retain, data, orphan, no target":  {creation: esv1.CreatePolicyOrphan, remote: "data", wantTarget: "written", wantReady: metav1.ConditionTrue, wantReason: esv1.ReasonSecretSynced},
		"retain, data, none, no target":    {creation: esv1.CreatePolicyNone, remote: "data", wantTarget: "absent", wantReady: metav1.ConditionTrue, wantReason: esv1.ReasonSecretSynced},
		"delete, all gone, none, target":   {deletion: esv1.DeletionPolicyDelete, creation: esv1.CreatePolicyNone, remote: "all gone", wantTarget: "absent", wantReady: metav1.ConditionTrue, wantReason: esv1.ReasonSecretDeleted, differs: "upstream reports Ready=False for Delete without Owner; with creationPolicy None eso has nothing to delete"},
		"retain, data, owner, no target":   {remote: "data", wantTarget: "written", wantReady: metav1.ConditionTrue, wantReason: esv1.ReasonSecretSynced},
		"merge policy, one gone":           {deletion: esv1.DeletionPolicyMerge, remote: "one gone", withTarget: true, wantTarget: "written", wantReady: metav1.ConditionTrue, wantReason: esv1.ReasonSecretSynced},
		"retain, all gone (named keys)":    {remote: "all gone", withTarget: true, wantTarget: "kept", wantReady: metav1.ConditionFalse, wantReason: esv1.ReasonSecretSyncedError},
		"merge policy, find empty, target": {deletion: esv1.DeletionPolicyMerge, remote: "find empty", withTarget: true, wantTarget: "emptied", wantReady: metav1.ConditionTrue, wantReason: esv1.ReasonSecretSynced},
	}
	gone := fmt.Errorf("data[1]: %w", plugin.ErrSecretNotFound)
	for name, row := range rows {
		t.Run(name, func(t *testing.T) {
			es := stepES(func(es *esv1.ExternalSecret) {
				es.Spec.Target.DeletionPolicy = row.deletion
				es.Spec.Target.CreationPolicy = row.creation
			})
			var fetched fetchResult
			switch row.remote {
			case "data":
				fetched = fetchResult{data: map[string][]byte{"a": []byte("1")}}
			case "one gone":
				fetched = fetchResult{data: map[string][]byte{"a": []byte("1")}, gone: gone}
			case "all gone":
				fetched = fetchResult{data: map[string][]byte{}, gone: gone}
			case "find empty":
				fetched = fetchResult{data: map[string][]byte{}}
			}
			var objs []client.Object
			var target *corev1.Secret
			if row.withTarget {
				target = ownedTarget(es)
				target.Labels = map[string]string{esv1.LabelManaged: esv1.LabelManagedValue}
				if row.creation == esv1.CreatePolicyOrphan {
					target.Annotations = map[string]string{esv1.AnnotationManagedBy: es.Name}
				} else {
					target.OwnerReferences = []metav1.OwnerReference{{APIVersion: esv1.GroupVersion.String(), Kind: "ExternalSecret",
						Name: es.Name, UID: es.UID, Controller: new(true)}}
				}
				target.Type, target.Data = corev1.SecretTypeOpaque, map[string][]byte{"old": []byte("v")}
				objs = append(objs, target)
			}
			if row.differs != "" {
				t.Logf("deliberately not upstream's: %s", row.differs)
			}
			r := applyReconciler(t, append(objs, es)...)
			sc := &syncScope{es: es, target: target, now: t0, fetched: fetched}
			if _, err := r.apply(context.Background(), sc); err != nil {
				setFailed(es, err) // as Reconcile's fail does
			}
			if c := readyCondition(es); c == nil || c.Status != row.wantReady || c.Reason != row.wantReason {
				t.Errorf("Ready %+v, want %s/%s", c, row.wantReady, row.wantReason)
			}
			var s corev1.Secret
			err := r.Client.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: es.TargetName()}, &s)
			got := "absent"
			switch {
			case err == nil && string(s.Data["a"]) == "1":
				got = "written"
			case err == nil && len(s.Data) == 0:
				got = "emptied"
			case err == nil && string(s.Data["old"]) == "v":
				got = "kept"
			case err == nil:
				got = fmt.Sprintf("holding %v", s.Data)
			case row.withTarget:
				got = "deleted"
			}
			if got != row.wantTarget {
				t.Errorf("target %s, want %s", got, row.wantTarget)
			}
		})
	}
}

// TestParityMergeTargetMissing: creationPolicy Merge with no Secret to merge
// into: the provider is read first (its errors show, and the deletion
// policy applies), then Ready=True, SecretMissing, and no Secret is created
// (externalsecret_controller.go:417-458, 516-525; upstream test
// mergeWithSecretErr).
func TestParityMergeTargetMissing(t *testing.T) {
	gone := fmt.Errorf("data[0]: %w", plugin.ErrSecretNotFound)
	for name, row := range map[string]struct {
		deletion   esv1.DeletionPolicy
		fetched    fetchResult
		wantReady  metav1.ConditionStatus
		wantReason string
	}{
		"provider answers":      {fetched: fetchResult{data: map[string][]byte{"a": []byte("1")}}, wantReady: metav1.ConditionTrue, wantReason: esv1.ReasonSecretMissing},
		"a key is gone, Retain": {fetched: fetchResult{data: map[string][]byte{}, gone: gone}, wantReady: metav1.ConditionFalse, wantReason: esv1.ReasonSecretSyncedError},
		"all gone, Delete":      {deletion: esv1.DeletionPolicyDelete, fetched: fetchResult{data: map[string][]byte{}, gone: gone}, wantReady: metav1.ConditionTrue, wantReason: esv1.ReasonSecretDeleted},
	} {
		t.Run(name, func(t *testing.T) {
			es := stepES(func(es *esv1.ExternalSecret) {
				es.Spec.Target.CreationPolicy = esv1.CreatePolicyMerge
				es.Spec.Target.DeletionPolicy = row.deletion
			})
			r := applyReconciler(t, es)
			sc := &syncScope{es: es, now: t0}
			if end, err := r.loadTarget(context.Background(), sc); err != nil || end != next || !sc.mergeMissing {
				t.Fatalf("loadTarget: end %v err %v mergeMissing %v", end, err, sc.mergeMissing)
			}
			sc.fetched = row.fetched
			if _, err := r.apply(context.Background(), sc); err != nil {
				setFailed(es, err)
			}
			if c := readyCondition(es); c.Status != row.wantReady || c.Reason != row.wantReason {
				t.Errorf("Ready %+v, want %s/%s", c, row.wantReady, row.wantReason)
			}
			if err := r.Client.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: es.TargetName()}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
				t.Errorf("a Secret exists: %v", err)
			}
		})
	}
}
