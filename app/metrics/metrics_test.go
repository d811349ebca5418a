package metrics

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// series lists the condition series of objs as "name/namespace/condition/status=value".
func series(t *testing.T, objs *Objects) []string {
	t.Helper()
	ch := make(chan prometheus.Metric, 100)
	objs.Collect(ch)
	close(ch)
	var out []string
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			t.Fatal(err)
		}
		if pb.Gauge == nil {
			continue
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
	objs := newObjects("test", "a test object", true)
	conds := []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse}, {Type: "Stalled", Status: metav1.ConditionTrue}}
	objs.SetConditions(conds, "app", "ns")
	objs.SetConditions(conds, "other", "ns")

	objs.ForgetCondition("Stalled", "app", "ns")
	objs.ForgetCondition("Stalled", "absent", "ns")
	want := []string{
		"app/ns/Ready/False=1", "app/ns/Ready/True=0", "app/ns/Ready/Unknown=0",
		"other/ns/Ready/False=1", "other/ns/Ready/True=0", "other/ns/Ready/Unknown=0",
		"other/ns/Stalled/False=0", "other/ns/Stalled/True=1", "other/ns/Stalled/Unknown=0",
	}
	if got := series(t, objs); !slices.Equal(got, want) {
		t.Errorf("series after forgetting app's Stalled:\n got %v\nwant %v", got, want)
	}

	// A status change moves the 1; an object's other conditions stay.
	objs.SetConditions([]metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue}}, "other", "ns")
	objs.Forget("app", "ns")
	want = []string{
		"other/ns/Ready/False=0", "other/ns/Ready/True=1", "other/ns/Ready/Unknown=0",
		"other/ns/Stalled/False=0", "other/ns/Stalled/True=1", "other/ns/Stalled/Unknown=0",
	}
	if got := series(t, objs); !slices.Equal(got, want) {
		t.Errorf("series after Ready turned True and app was forgotten:\n got %v\nwant %v", got, want)
	}
}

// TestObjectsExposition: what a scrape shows is what the client_golang
// vectors these replace showed, names, help, labels and values, and passes
// the pedantic registry's checks (label order, one series per label set).
func TestObjectsExposition(t *testing.T) {
	objs := newObjects("test", "a test object", true)
	calls := objs.counter("test_sync_calls_total", "Syncs.")
	errs := objs.counter("test_sync_calls_error", "Failed syncs.")
	cluster := newObjects("clustertest", "a cluster test object", false)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(objs, cluster)

	objs.SetConditions([]metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue}}, "app", "ns")
	calls.Inc("app", "ns")
	calls.Inc("app", "ns")
	calls.Inc("other", "ns") // no conditions yet, no errors: only this series
	cluster.SetConditions([]metav1.Condition{{Type: "Ready", Status: metav1.ConditionUnknown}}, "shared", "ignored")

	want := `
# HELP clustertest_status_condition The status of a cluster test object's conditions: 1 for the current status, 0 for the others.
# TYPE clustertest_status_condition gauge
clustertest_status_condition{condition="Ready",name="shared",status="False"} 0
clustertest_status_condition{condition="Ready",name="shared",status="True"} 0
clustertest_status_condition{condition="Ready",name="shared",status="Unknown"} 1
# HELP test_status_condition The status of a test object's conditions: 1 for the current status, 0 for the others.
# TYPE test_status_condition gauge
test_status_condition{condition="Ready",name="app",namespace="ns",status="False"} 0
test_status_condition{condition="Ready",name="app",namespace="ns",status="True"} 1
test_status_condition{condition="Ready",name="app",namespace="ns",status="Unknown"} 0
# HELP test_sync_calls_error Failed syncs.
# TYPE test_sync_calls_error counter
# HELP test_sync_calls_total Syncs.
# TYPE test_sync_calls_total counter
test_sync_calls_total{name="app",namespace="ns"} 2
test_sync_calls_total{name="other",namespace="ns"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	if got := calls.Value("app", "ns"); got != 2 {
		t.Errorf("calls of app: %v, want 2", got)
	}
	if got := errs.Value("app", "ns"); got != 0 {
		t.Errorf("errors of app: %v, want 0", got)
	}

	objs.Forget("app", "ns")
	if n, err := testutil.GatherAndCount(reg, "test_status_condition", "test_sync_calls_total"); err != nil || n != 1 {
		t.Errorf("series after forgetting app: %d (%v), want other's count only", n, err)
	}
}

// BenchmarkObjects shows what an ExternalSecret's series cost to keep:
// B/op of its first sync's metrics (four series).
func BenchmarkObjects(b *testing.B) {
	b.Run("set", func(b *testing.B) {
		objs := newObjects("bench", "a bench object", true)
		calls := objs.counter("bench_calls_total", "Calls.")
		conds := []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue}}
		names := make([]string, b.N)
		for i := range names {
			names[i] = fmt.Sprintf("es-%d", i)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			objs.SetConditions(conds, names[i], "namespace")
			calls.Inc(names[i], "namespace")
		}
	})
}

// TestRetain: the series of objects keep rejects go, the others stay.
func TestRetain(t *testing.T) {
	objs := newObjects("test", "a test object", true)
	ready := []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue}}
	objs.SetConditions(ready, "app", "kept")
	objs.SetConditions(ready, "app", "given-up")
	objs.Retain(func(_, namespace string) bool { return namespace == "kept" })
	want := []string{"app/kept/Ready/False=0", "app/kept/Ready/True=1", "app/kept/Ready/Unknown=0"}
	if got := series(t, objs); !slices.Equal(got, want) {
		t.Errorf("series after Retain:\n got %v\nwant %v", got, want)
	}
}
