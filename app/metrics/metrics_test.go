package metrics

import (
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// series lists gauge's series as "name/namespace/condition/status=value".
func series(t *testing.T, gauge *prometheus.GaugeVec) []string {
	t.Helper()
	ch := make(chan prometheus.Metric, 100)
	gauge.Collect(ch)
	close(ch)
	var out []string
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			t.Fatal(err)
		}
		labels := map[string]string{}
		for _, l := range pb.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		v := "0"
		if pb.GetGauge().GetValue() == 1 {
			v = "1"
		}
		out = append(out, labels["name"]+"/"+labels["namespace"]+"/"+labels["condition"]+"/"+labels["status"]+"="+v)
	}
	slices.Sort(out)
	return out
}

// TestForgetCondition: a condition an object no longer carries leaves no
// series behind, while its other conditions' series and other objects'
// series of the same condition stay; forgetting one that has none is no
// matter.
func TestForgetCondition(t *testing.T) {
	gauge := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "test_status_condition"}, []string{"name", "namespace", "condition", "status"})
	conds := []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse}, {Type: "Stalled", Status: metav1.ConditionTrue}}
	SetConditions(gauge, conds, "app", "ns")
	SetConditions(gauge, conds, "other", "ns")

	ForgetCondition(gauge, "Stalled", "app", "ns")
	ForgetCondition(gauge, "Stalled", "absent", "ns")
	want := []string{
		"app/ns/Ready/False=1", "app/ns/Ready/True=0", "app/ns/Ready/Unknown=0",
		"other/ns/Ready/False=1", "other/ns/Ready/True=0", "other/ns/Ready/Unknown=0",
		"other/ns/Stalled/False=0", "other/ns/Stalled/True=1", "other/ns/Stalled/Unknown=0",
	}
	if got := series(t, gauge); !slices.Equal(got, want) {
		t.Errorf("series after forgetting app's Stalled:\n got %v\nwant %v", got, want)
	}
}
