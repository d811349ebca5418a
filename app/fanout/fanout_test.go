package fanout

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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
