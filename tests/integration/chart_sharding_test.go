package integration

import (
	"context"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// TestChartSharding: with sharding.enabled every replica runs with
// --shards=auto and still with --leader-elect (one replica does the
// singleton tasks), knows its Pod's name, may keep membership Leases in
// the release namespace and nowhere else, and a PodDisruptionBudget keeps
// at most one of the replicas down. Without leader election the chart
// refuses, saying why.
func TestChartSharding(t *testing.T) {
	ctx := context.Background()
	system := env.Namespace(t, "eso-sharded", nil)
	other := env.Namespace(t, "sharded-other", nil)
	release := "eso-" + system
	set := []string{"sharding.enabled=true", "replicas=3", "crds.install=false"}

	lint := []string{"lint", coreChart, "--strict"}
	for _, s := range set {
		lint = append(lint, "--set", s)
	}
	helm(t, lint...)
	objs := render(t, release, system, set...)
	dryRun(t, objs)

	deploy := typed[appsv1.Deployment](t, objs, "Deployment")
	c := deploy.Spec.Template.Spec.Containers[0]
	for _, want := range []string{"--shards=auto", "--leader-elect", "--leader-election-namespace=" + system} {
		if !slices.Contains(c.Args, want) {
			t.Errorf("args %v lack %s", c.Args, want)
		}
	}
	if *deploy.Spec.Replicas != 3 {
		t.Errorf("replicas %d, want 3", *deploy.Spec.Replicas)
	}
	if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool {
		return e.Name == "POD_NAME" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name"
	}) {
		t.Errorf("env %v: no POD_NAME from the Pod's metadata.name", c.Env)
	}

	pdb := typed[policyv1.PodDisruptionBudget](t, objs, "PodDisruptionBudget")
	selector, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 || pdb.Namespace != system ||
		!selector.Matches(labels.Set(deploy.Spec.Template.Labels)) {
		t.Errorf("PodDisruptionBudget %s/%s maxUnavailable %v selector %v, want at most 1 of the Deployment's Pods (%v) down",
			pdb.Namespace, pdb.Name, pdb.Spec.MaxUnavailable, selector, deploy.Spec.Template.Labels)
	}

	// Leases: granted by a Role in the release namespace, with every verb
	// the ring needs, and by no cluster-wide rule.
	leaseVerbs := []string{"get", "list", "create", "update", "delete"}
	granted := false
	for _, obj := range objs {
		rules, _, _ := unstructured.NestedSlice(obj.Object, "rules")
		for _, r := range rules {
			var rule rbacv1.PolicyRule
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(r.(map[string]any), &rule); err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(rule.Resources, "leases") {
				continue
			}
			if obj.GetKind() != "Role" || obj.GetNamespace() != system {
				t.Errorf("%s %s/%s grants leases, want a Role in %s only", obj.GetKind(), obj.GetNamespace(), obj.GetName(), system)
				continue
			}
			for _, v := range leaseVerbs {
				if !slices.Contains(rule.Verbs, v) {
					t.Errorf("Role %s grants %v on leases, without %s", obj.GetName(), rule.Verbs, v)
				}
			}
			granted = true
		}
	}
	if !granted {
		t.Fatalf("no Role grants leases")
	}

	// As the chart's ServiceAccount: a membership Lease in the release
	// namespace is created, listed, renewed and deleted; another
	// namespace's Leases are out of reach.
	for _, obj := range objs {
		switch obj.GetKind() {
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
			create(t, obj)
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
		}
	}
	asServiceAccount := serviceAccountConfig(system, release)
	cs, err := kubernetes.NewForConfig(asServiceAccount)
	if err != nil {
		t.Fatal(err)
	}
	ring := map[string]string{"sharding.external-secrets.io/ring": "eso-core.external-secrets.io"}
	var lease *coordinationv1.Lease
	eventually(t, "the chart's Role to let eso create a membership Lease", func() error {
		lease, err = cs.CoordinationV1().Leases(system).Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: "eso-shard-eso-0-test", Labels: ring},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("eso-shard-eso-0-test"), LeaseDurationSeconds: ptr.To[int32](15)},
		}, metav1.CreateOptions{})
		return err
	})
	leases := cs.CoordinationV1().Leases(system)
	if list, err := leases.List(ctx, metav1.ListOptions{LabelSelector: labels.Set(ring).String()}); err != nil || len(list.Items) != 1 {
		t.Errorf("listing the ring's Leases: %v, %v", list, err)
	}
	lease.Spec.RenewTime = ptr.To(metav1.NowMicro())
	if _, err := leases.Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		t.Errorf("renewing a membership Lease: %v", err)
	}
	if err := leases.Delete(ctx, lease.Name, metav1.DeleteOptions{}); err != nil {
		t.Errorf("deleting a membership Lease: %v", err)
	}
	if _, err := cs.CoordinationV1().Leases(other).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("listing Leases in %s, outside the release namespace: %v, want Forbidden", other, err)
	}

	// Sharding without leader election: refused by the values schema, and
	// by the template itself when the schema is skipped, each naming
	// sharding.enabled.
	for _, extra := range [][]string{nil, {"--skip-schema-validation"}} {
		args := append([]string{"template", "eso", coreChart, "--set", "sharding.enabled=true", "--set", "leaderElection.enabled=false"}, extra...)
		_, err := runHelm(args...)
		if err == nil {
			t.Errorf("helm template %v accepted sharding without leader election", extra)
			continue
		}
		_, stderr, _ := strings.Cut(err.Error(), "\n") // after the command line, which names sharding itself
		switch {
		case !strings.Contains(stderr, "sharding"):
			t.Errorf("helm template %v refused sharding without leader election without naming it: %s", extra, stderr)
		case extra != nil && !strings.Contains(stderr, "sharding.enabled needs leaderElection.enabled"):
			t.Errorf("helm template %v: %s, want the template's message", extra, stderr)
		}
	}
}
