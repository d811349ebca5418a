package externalsecret

import (
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
)

func TestWindowWait(t *testing.T) {
	at := func(hhmm string) time.Time {
		tm, err := time.Parse("2006-01-02 15:04", "2026-11-20 "+hhmm)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	window := func(kind esv1.SyncWindowKind, schedule string, d time.Duration) esv1.SyncWindow {
		return esv1.SyncWindow{Kind: kind, Schedule: schedule, Duration: metav1.Duration{Duration: d}}
	}
	nightly := window(esv1.SyncWindowAllow, "0 22 * * *", 2*time.Hour) // 22:00-24:00
	freeze := window(esv1.SyncWindowDeny, "0 12 * * *", time.Hour)     // 12:00-13:00
	cases := []struct {
		name    string
		windows []esv1.SyncWindow
		now     string
		want    time.Duration
	}{
		{"no windows", nil, "12:30", 0},
		{"outside a deny window", []esv1.SyncWindow{freeze}, "11:59", 0},
		{"inside a deny window", []esv1.SyncWindow{freeze}, "12:15", 45 * time.Minute},
		{"inside an allow window", []esv1.SyncWindow{nightly}, "23:30", 0},
		{"before an allow window", []esv1.SyncWindow{nightly}, "21:00", time.Hour},
		{"deny wins over allow", []esv1.SyncWindow{window(esv1.SyncWindowAllow, "0 12 * * *", 2*time.Hour), freeze}, "12:10", 50 * time.Minute},
	}
	for _, tc := range cases {
		got, err := windowWait(tc.windows, at(tc.now))
		if err != nil || got != tc.want {
			t.Errorf("%s at %s: wait %v, %v; want %v", tc.name, tc.now, got, err, tc.want)
		}
	}
	for _, bad := range []string{"every day", "@every 1h", "@daily", "CRON_TZ=Europe/Paris 0 22 * * *", "0 0 22 * * *"} {
		if _, err := windowWait([]esv1.SyncWindow{window(esv1.SyncWindowDeny, bad, time.Hour)}, at("12:00")); !errors.Is(err, errBadSyncWindow) {
			t.Errorf("schedule %q: %v, want errBadSyncWindow", bad, err)
		}
	}
}
