package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Objects holds the series of one kind of object, one set per object: its
// <object>_status_condition gauge and, for ExternalSecrets, the sync
// counters. There are as many as there are objects, tens of thousands,
// so they are kept compactly and made into metrics only when scraped: a
// client_golang vector keeps about a kilobyte per series (label pairs, a
// metric and its hash), four per ExternalSecret, more than the
// ExternalSecret itself in the informer cache. Here an object costs its
// name and namespace label pairs, shared by its series, and a few words.
type Objects struct {
	conditions *prometheus.Desc
	counters   []*prometheus.Desc
	namespaced bool

	mu   sync.RWMutex
	objs map[objectKey]*objectSeries
	// conditionLabels interns the condition="<type>" label pairs: eso's
	// own condition types, a handful.
	conditionLabels map[string]*dto.LabelPair
}

type objectKey struct{ name, namespace string }

type objectSeries struct {
	// labels are name (and namespace), in label name order; never changed
	// once made, so scraped metrics may share them.
	labels []*dto.LabelPair
	conds  []conditionSeries
	// counts are the counters' values, by counter; a counter has no series
	// until incremented, as in a CounterVec.
	counts []float64
}

type conditionSeries struct {
	label  *dto.LabelPair // condition="<type>"
	status metav1.ConditionStatus
}

// statusLabels are the status="..." label pairs of conditionStatuses.
var statusLabels = func() []*dto.LabelPair {
	out := make([]*dto.LabelPair, len(conditionStatuses))
	for i, s := range conditionStatuses {
		out[i] = labelPair("status", string(s))
	}
	return out
}()

// labelNames are shared by every label pair of their name.
var labelNames = map[string]*string{"condition": ptr.To("condition"), "name": ptr.To("name"),
	"namespace": ptr.To("namespace"), "status": ptr.To("status")}

func labelPair(name, value string) *dto.LabelPair {
	return &dto.LabelPair{Name: labelNames[name], Value: ptr.To(value)}
}

// newObjects returns the series of objects of a kind: upstream's
// <object>_status_condition gauge, labelled by name (and namespace when
// namespaced), condition and status.
func newObjects(object, which string, namespaced bool) *Objects {
	labels := []string{"name", "condition", "status"}
	if namespaced {
		labels = []string{"name", "namespace", "condition", "status"}
	}
	return &Objects{
		conditions: prometheus.NewDesc(object+"_status_condition",
			"The status of "+which+"'s conditions: 1 for the current status, 0 for the others.", labels, nil),
		namespaced:      namespaced,
		objs:            map[objectKey]*objectSeries{},
		conditionLabels: map[string]*dto.LabelPair{},
	}
}

// counter adds a counter labelled by the object's name and namespace.
// Counters are added before the Objects is registered.
func (o *Objects) counter(name, help string) ObjectCounter {
	labels := []string{"name"}
	if o.namespaced {
		labels = append(labels, "namespace")
	}
	o.counters = append(o.counters, prometheus.NewDesc(name, help, labels, nil))
	return ObjectCounter{objects: o, index: len(o.counters) - 1}
}

// object returns the series of an object, made if new; the caller holds
// o.mu for writing.
func (o *Objects) object(name, namespace string) *objectSeries {
	if !o.namespaced {
		namespace = ""
	}
	k := objectKey{name: name, namespace: namespace}
	s := o.objs[k]
	if s == nil {
		labels := []*dto.LabelPair{labelPair("name", name)}
		if o.namespaced {
			labels = append(labels, labelPair("namespace", namespace))
		}
		s = &objectSeries{labels: labels}
		o.objs[k] = s
	}
	return s
}

// SetConditions records an object's conditions: each condition type it
// has had keeps its series until ForgetCondition.
func (o *Objects) SetConditions(conds []metav1.Condition, name, namespace string) {
	if len(conds) == 0 {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.object(name, namespace)
next:
	for _, c := range conds {
		for i := range s.conds {
			if s.conds[i].label.GetValue() == c.Type {
				s.conds[i].status = c.Status
				continue next
			}
		}
		label := o.conditionLabels[c.Type]
		if label == nil {
			label = labelPair("condition", c.Type)
			o.conditionLabels[c.Type] = label
		}
		s.conds = append(s.conds, conditionSeries{label: label, status: c.Status})
	}
}

// ForgetCondition drops the series of one condition type of an object: for
// a condition the object no longer carries, whose series would otherwise
// keep its last status. Series that do not exist are no matter.
func (o *Objects) ForgetCondition(condition, name, namespace string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.namespaced {
		namespace = ""
	}
	s := o.objs[objectKey{name: name, namespace: namespace}]
	if s == nil {
		return
	}
	for i := range s.conds {
		if s.conds[i].label.GetValue() == condition {
			s.conds = append(s.conds[:i], s.conds[i+1:]...)
			break
		}
	}
}

// Forget drops every series of a deleted object.
func (o *Objects) Forget(name, namespace string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.namespaced {
		namespace = ""
	}
	delete(o.objs, objectKey{name: name, namespace: namespace})
}

// Retain drops the series of every object keep rejects: with --shards auto,
// those of the namespaces (and cluster-scoped names) this replica gave up,
// which another replica reports from then on.
func (o *Objects) Retain(keep func(name, namespace string) bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for k := range o.objs {
		if !keep(k.name, k.namespace) {
			delete(o.objs, k)
		}
	}
}

// Describe implements prometheus.Collector.
func (o *Objects) Describe(ch chan<- *prometheus.Desc) {
	ch <- o.conditions
	for _, d := range o.counters {
		ch <- d
	}
}

// Collect implements prometheus.Collector: it makes the series of every
// object, sharing their label pairs. They are made under the lock and sent
// after it: a scrape reads the channel at its own pace, and the writers
// (every status write and sync) must not wait for it.
func (o *Objects) Collect(ch chan<- prometheus.Metric) {
	for _, m := range o.series() {
		ch <- m
	}
}

func (o *Objects) series() []prometheus.Metric {
	o.mu.RLock()
	defer o.mu.RUnlock()
	var out []prometheus.Metric
	for _, s := range o.objs {
		for _, c := range s.conds {
			for i, status := range conditionStatuses {
				// In label name order: condition, name, namespace, status.
				labels := make([]*dto.LabelPair, 0, len(s.labels)+2)
				labels = append(append(append(labels, c.label), s.labels...), statusLabels[i])
				v := 0.0
				if c.status == status {
					v = 1
				}
				out = append(out, &objectMetric{desc: o.conditions, labels: labels, value: v, gauge: true})
			}
		}
		for i, v := range s.counts {
			if v > 0 {
				out = append(out, &objectMetric{desc: o.counters[i], labels: s.labels, value: v})
			}
		}
	}
	return out
}

// objectMetric is one series of an object, as scraped.
type objectMetric struct {
	desc   *prometheus.Desc
	labels []*dto.LabelPair
	value  float64
	gauge  bool
}

func (m *objectMetric) Desc() *prometheus.Desc { return m.desc }

func (m *objectMetric) Write(out *dto.Metric) error {
	out.Label = m.labels
	if m.gauge {
		out.Gauge = &dto.Gauge{Value: &m.value}
	} else {
		out.Counter = &dto.Counter{Value: &m.value}
	}
	return nil
}

// ObjectCounter is a counter of an Objects, one series per object.
type ObjectCounter struct {
	objects *Objects
	index   int
}

// Inc adds one to the object's series.
func (c ObjectCounter) Inc(name, namespace string) {
	o := c.objects
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.object(name, namespace)
	if len(s.counts) <= c.index {
		s.counts = append(s.counts, make([]float64, c.index+1-len(s.counts))...)
	}
	s.counts[c.index]++
}

// Value is the object's count, 0 if it has no series.
func (c ObjectCounter) Value(name, namespace string) float64 {
	o := c.objects
	o.mu.RLock()
	defer o.mu.RUnlock()
	if !o.namespaced {
		namespace = ""
	}
	if s := o.objs[objectKey{name: name, namespace: namespace}]; s != nil && c.index < len(s.counts) {
		return s.counts[c.index]
	}
	return 0
}
