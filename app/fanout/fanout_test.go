package fanout

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlfake "sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestMatchingNamespaces(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	ns := func(name string, labels map[string]string, phase corev1.NamespacePhase) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Status: corev1.NamespaceStatus{Phase: phase}}
	}
	c := ctrlfake.NewClientBuilder().WithScheme(scheme).WithObjects(
		ns("a", map[string]string{"team": "x"}, corev1.NamespaceActive),
		ns("b", nil, corev1.NamespaceActive),
		ns("c", map[string]string{"team": "x"}, corev1.NamespaceTerminating),
		ns("d", map[string]string{"tier": "gold"}, corev1.NamespaceActive),
	).Build()
	got, err := MatchingNamespaces(context.Background(), c,
		[]*metav1.LabelSelector{{MatchLabels: map[string]string{"team": "x"}}, {MatchLabels: map[string]string{"tier": "gold"}}}, []string{"b"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b", "d"}; !slices.Equal(got, want) {
		t.Errorf("matched %v, want %v (a terminating namespace never)", got, want)
	}
	_, err = MatchingNamespaces(context.Background(), c, []*metav1.LabelSelector{{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Bad"}}}}, nil)
	if !errors.Is(err, ErrInvalidSelector) {
		t.Errorf("a bad selector: %v, want ErrInvalidSelector", err)
	}
}

func TestOwnerLabelFitsALabelValue(t *testing.T) {
	long := strings.Repeat("n", 200)
	if got := OwnerLabel(long); len(got) > 63 || OwnerLabel(long+"x") == got {
		t.Errorf("OwnerLabel of a long name = %q: must fit 63 characters and tell names apart", got)
	}
	if OwnerLabel("short") != "short" {
		t.Error("a short name is its own label")
	}
}

func TestInterval(t *testing.T) {
	if Interval(nil) != time.Minute || Interval(&metav1.Duration{}) != time.Minute || Interval(&metav1.Duration{Duration: time.Hour}) != time.Hour {
		t.Error("Interval: a minute when unset, else the duration")
	}
}

// configMaps are children of one test parent (a Namespace, cluster-scoped):
// ConfigMaps named "child", with label.
func configMaps(parent *corev1.Namespace, label string) Children[*corev1.ConfigMap] {
	return Children[*corev1.ConfigMap]{
		Parent: parent, Kind: "ConfigMap", Name: "child", Label: label, Taken: "config map already exists in namespace",
		New: func() *corev1.ConfigMap { return &corev1.ConfigMap{} },
		List: ListOf[*corev1.ConfigMapList, corev1.ConfigMap](func() *corev1.ConfigMapList { return &corev1.ConfigMapList{} },
			func(l *corev1.ConfigMapList) []corev1.ConfigMap { return l.Items }),
		Fill: func(cm *corev1.ConfigMap) { cm.Labels = map[string]string{"team": "x"} },
		Spec: func(cm *corev1.ConfigMap) any { return cm.Data },
	}
}

// TestTheOwnerLabelIsPerKind: with a Label, children carry the owner label
// and are listed by it; without, they carry exactly Fill's labels and are
// found by the controller index. Either way, only what the parent controls
// is pruned, and a foreign child of the name is the namespace's failure,
// in the kind's words.
func TestTheOwnerLabelIsPerKind(t *testing.T) {
	ctx := context.Background()
	for name, label := range map[string]string{"labelled": "example.io/parent", "label-free": ""} {
		t.Run(name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			if err := corev1.AddToScheme(scheme); err != nil {
				t.Fatal(err)
			}
			parent := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "parent", UID: "parent-uid"}}
			foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "child",
				Labels: map[string]string{"example.io/parent": "parent"}}}
			c := ctrlfake.NewClientBuilder().WithScheme(scheme).WithObjects(parent, foreign).
				WithIndex(&corev1.ConfigMap{}, IndexController, ControllerUID).Build()
			ch := configMaps(parent, label)
			spread, err := ch.Spread(ctx, c, []string{"a", "b"})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(spread.Provisioned, []string{"a"}) || len(spread.Failed) != 1 || spread.Failed[0].Reason != ch.Taken {
				t.Fatalf("spread %+v: want a provisioned, b failed with %q", spread, ch.Taken)
			}
			var got corev1.ConfigMap
			if err := c.Get(ctx, client.ObjectKey{Namespace: "a", Name: "child"}, &got); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"team": "x"}
			if label != "" {
				want[label] = "parent"
			}
			if !maps.Equal(got.Labels, want) || !metav1.IsControlledBy(&got, parent) {
				t.Errorf("child labels %v, want %v, controlled by the parent", got.Labels, want)
			}
			// Nothing selected: the parent's child goes, the foreign one stays.
			if _, err := ch.Spread(ctx, c, nil); err != nil {
				t.Fatal(err)
			}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "a", Name: "child"}, &got); err == nil {
				t.Error("the parent's child in a namespace no longer selected was not pruned")
			}
			if err := c.Get(ctx, client.ObjectKeyFromObject(foreign), &got); err != nil {
				t.Errorf("a child the parent does not control was pruned: %v", err)
			}
		})
	}
}
