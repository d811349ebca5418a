package main

import (
	"bufio"
	"math"
	"strings"
	"testing"
	"time"
)

// These cover the parsers and the arithmetic only; the benchmark itself
// runs through make bench.

func TestParseStatus(t *testing.T) {
	raw := []byte("Name:\teso\nVmPeak:\t 900000 kB\nVmHWM:\t   81920 kB\nVmRSS:\t   40960 kB\nThreads:\t9\n")
	m, err := parseStatus(raw)
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS != 40<<20 || m.Peak != 80<<20 {
		t.Fatalf("got RSS %d, peak %d", m.RSS, m.Peak)
	}
	if _, err := parseStatus([]byte("Name:\teso\n")); err == nil {
		t.Fatal("missing fields accepted")
	}
}

func TestParseStat(t *testing.T) {
	// The command name may contain spaces and parentheses.
	raw := []byte("4242 (es o) (x)) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 130 0 0 20 0 9 0 100 0 0\n")
	got, err := parseStat(raw)
	if err != nil {
		t.Fatal(err)
	}
	if got != 3.8 {
		t.Fatalf("got %v CPU seconds, want 3.8", got)
	}
}

func TestSum(t *testing.T) {
	fams, err := parseMetrics([]byte(`# TYPE apiserver_request_total counter
apiserver_request_total{resource="secrets",subresource="",verb="POST"} 3
apiserver_request_total{resource="secrets",subresource="",verb="GET"} 100
apiserver_request_total{resource="externalsecrets",subresource="status",verb="PUT"} 2
# TYPE eso_secret_writes_total counter
eso_secret_writes_total{operation="create"} 5
eso_secret_writes_total{operation="update"} 1
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := sum(fams, "eso_secret_writes_total", nil); got != 6 {
		t.Errorf("eso_secret_writes_total: got %v, want 6", got)
	}
	if got := sum(fams, "apiserver_request_total", map[string]string{"resource": "secrets", "subresource": "", "verb": "POST"}); got != 3 {
		t.Errorf("secret POSTs: got %v, want 3", got)
	}
	if got := sum(fams, "missing", nil); got != 0 {
		t.Errorf("missing family: got %v, want 0", got)
	}
}

// The API server's time per request: a histogram's sum, by the key of its
// labels, over the count of those requests.
func TestMeanMilliseconds(t *testing.T) {
	fams, err := parseMetrics([]byte(`# TYPE apiserver_request_total counter
apiserver_request_total{resource="secrets",subresource="",verb="POST",code="201"} 3
apiserver_request_total{resource="secrets",subresource="",verb="POST",code="409"} 1
# TYPE apiserver_request_duration_seconds histogram
apiserver_request_duration_seconds_bucket{resource="secrets",subresource="",verb="POST",scope="resource",le="+Inf"} 3
apiserver_request_duration_seconds_sum{resource="secrets",subresource="",verb="POST",scope="resource"} 0.06
apiserver_request_duration_seconds_count{resource="secrets",subresource="",verb="POST",scope="resource"} 3
apiserver_request_duration_seconds_bucket{resource="secrets",subresource="",verb="POST",scope="namespace",le="+Inf"} 1
apiserver_request_duration_seconds_sum{resource="secrets",subresource="",verb="POST",scope="namespace"} 0.02
apiserver_request_duration_seconds_count{resource="secrets",subresource="",verb="POST",scope="namespace"} 1
`))
	if err != nil {
		t.Fatal(err)
	}
	key := func(l map[string]string) string { return l["verb"] + " " + l["resource"] }
	api := apiWrites{Requests: byLabels(fams["apiserver_request_total"], key),
		RequestSeconds: byLabels(fams["apiserver_request_duration_seconds"], key)}
	if got, want := meanMilliseconds(api, "POST secrets", "PATCH externalsecrets/status"), "POST secrets 20.0 ms"; got != want {
		t.Errorf("meanMilliseconds = %q, want %q", got, want)
	}
}

func TestHistogramQuantile(t *testing.T) {
	// 100 calls: 50 under 0.5 ms, 49 between 0.5 and 1 ms, one under 10 ms.
	h := histogram{bounds: []float64{0.0005, 0.001, 0.01}, counts: []float64{50, 99, 100}, total: 100}
	if q := h.quantile(0.5); q != 0.0005 {
		t.Errorf("p50 = %v", q)
	}
	if q := h.quantile(0.99); q != 0.001 {
		t.Errorf("p99 = %v", q)
	}
	if q := h.quantile(0.995); q < 0.001 || q > 0.01 {
		t.Errorf("p99.5 = %v", q)
	}
}

func TestCountClientEnds(t *testing.T) {
	// Port 6443 is 192B: two client ends (established, dialling), one in
	// TIME_WAIT (06), the server's own listening and accepted ends.
	table := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:192B 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0000000000000000 100 0 0 10 0
   1: 0100007F:A1B2 0100007F:192B 01 00000000:00000000 00:00000000 00000000     0        0 2 1 0000000000000000 20 4 30 10 -1
   2: 0100007F:A1B3 0100007F:192B 02 00000000:00000000 00:00000000 00000000     0        0 3 1 0000000000000000 20 4 30 10 -1
   3: 0100007F:A1B4 0100007F:192B 06 00000000:00000000 00:00000000 00000000     0        0 4 1 0000000000000000 20 4 30 10 -1
   4: 0100007F:192B 0100007F:A1B2 01 00000000:00000000 00:00000000 00000000     0        0 5 1 0000000000000000 20 4 30 10 -1
`
	got, err := countClientEnds(bufio.NewScanner(strings.NewReader(table)), 6443)
	if err != nil || got != 2 {
		t.Fatalf("got %d, %v; want 2 client ends", got, err)
	}
	if n, err := connectionsTo(1); err != nil || n != 0 {
		t.Fatalf("connections to port 1 on this machine: %d, %v", n, err)
	}
}

func TestReachFloor(t *testing.T) {
	for _, tc := range []struct {
		name             string
		h                handover
		perSecond        float64
		wantP50, wantMax float64
	}{
		{"worked again after the change", handover{WorkedAgainSeconds: 7, ChangeAfter: 5, ChangedSecrets: 1000}, 200, 4.5, 7},
		{"worked again before the change", handover{WorkedAgainSeconds: 3, ChangeAfter: 5, ChangedSecrets: 1000}, 200, 2.5, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.h
			h.setReachFloor(tc.perSecond)
			if math.Abs(h.FloorP50Seconds-tc.wantP50) > 1e-9 || math.Abs(h.FloorMaxSeconds-tc.wantMax) > 1e-9 {
				t.Errorf("floor = %v / %v, want %v / %v", h.FloorP50Seconds, h.FloorMaxSeconds, tc.wantP50, tc.wantMax)
			}
		})
	}
}

func TestControlPlaneProcesses(t *testing.T) {
	name, ppid, ok := parseNameAndParent([]byte("4242 (kube apiserver) S 17 4242 4242 0 -1 4194560 0 0 0 0 11 7"))
	if !ok || name != "kube apiserver" || ppid != 17 {
		t.Fatalf("got %q, %d, %v; want the name with its space and parent 17", name, ppid, ok)
	}
	parents := map[int]int{30: 20, 20: 10, 10: 1, 40: 1}
	if !descendsFrom(30, 10, parents) {
		t.Error("a grandchild does not descend from its grandparent")
	}
	if descendsFrom(40, 10, parents) {
		t.Error("another process's child descends from this one")
	}
	if descendsFrom(5, 10, map[int]int{5: 6, 6: 5}) {
		t.Error("a cycle in a racy /proc read is followed as descent")
	}
}

func TestTrackerCountsReady(t *testing.T) {
	tr := &tracker{changes: changes{changed: make(chan struct{})}, objs: map[string]esState{}, ready: map[time.Duration]int{}}
	tr.set("a/1", &esState{ready: true, refresh: time.Minute})
	tr.set("a/2", &esState{ready: true, refresh: time.Minute})
	tr.set("a/3", &esState{ready: false, refresh: time.Minute})
	tr.set("a/2", &esState{ready: true, refresh: 2 * time.Second}) // refreshInterval edited
	tr.set("a/3", &esState{ready: true, refresh: 2 * time.Second}) // became Ready
	tr.set("a/1", &esState{ready: false, refresh: time.Minute})    // a new generation, not yet synced
	tr.set("a/4", &esState{ready: true, refresh: time.Minute})
	tr.set("a/4", nil) // deleted
	for refresh, want := range map[time.Duration]int{0: 2, time.Minute: 0, 2 * time.Second: 2} {
		if got := tr.countReady(refresh); got != want {
			t.Errorf("countReady(%v) = %d, want %d", refresh, got, want)
		}
	}
}

func TestRequestsByVerbAndResource(t *testing.T) {
	read := func(text string) apiWrites {
		t.Helper()
		fams, err := parseMetrics([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		return apiWrites{
			Requests: byLabels(fams["apiserver_request_total"], func(l map[string]string) string {
				return l["verb"] + " " + l["resource"]
			}),
		}
	}
	before := read(`# TYPE apiserver_request_total counter
apiserver_request_total{resource="secrets",verb="POST",code="201"} 3
apiserver_request_total{resource="secrets",verb="LIST",code="200"} 1
`)
	after := read(`# TYPE apiserver_request_total counter
apiserver_request_total{resource="secrets",verb="POST",code="201"} 10
apiserver_request_total{resource="secrets",verb="POST",code="409"} 2
apiserver_request_total{resource="secrets",verb="LIST",code="200"} 1
apiserver_request_total{resource="events",verb="POST",code="201"} 4
`)
	got := after.minus(before)
	if want := "POST secrets 9, POST events 4"; largest(got.Requests, 5) != want {
		t.Errorf("got %q, want %q", largest(got.Requests, 5), want)
	}
	if got := largest(nil, 3); got != "none" {
		t.Errorf("empty: %q", got)
	}
}
