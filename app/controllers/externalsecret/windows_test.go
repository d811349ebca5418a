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
	windows := func(kind esv1.SyncWindowKind, schedule string, d time.Duration, more ...esv1.SyncWindow) *esv1.SyncWindows {
		return &esv1.SyncWindows{Kind: kind, Windows: append([]esv1.SyncWindow{{Schedule: schedule, Duration: metav1.Duration{Duration: d}}}, more...)}
	}
	nightly := windows(esv1.SyncWindowAllow, "0 22 * * *", 2*time.Hour) // 22:00-24:00
	freeze := windows(esv1.SyncWindowDeny, "0 12 * * *", time.Hour)     // 12:00-13:00
	cases := []struct {
		name    string
		windows *esv1.SyncWindows
		now     string
		want    time.Duration
	}{
		{"no windows", nil, "12:30", 0},
		{"outside a deny window", freeze, "11:59", 0},
		{"inside a deny window", freeze, "12:15", 45 * time.Minute},
		{"inside an allow window", nightly, "23:30", 0},
		{"before an allow window", nightly, "21:00", time.Hour},
		{"inside the second of two allow windows", windows(esv1.SyncWindowAllow, "0 6 * * *", time.Hour,
			esv1.SyncWindow{Schedule: "0 22 * * *", Duration: metav1.Duration{Duration: 2 * time.Hour}}), "22:30", 0},
		{"a descriptor, as upstream accepts", windows(esv1.SyncWindowDeny, "@daily", time.Hour), "00:30", 30 * time.Minute},
	}
	for _, tc := range cases {
		got, err := windowWait(tc.windows, at(tc.now))
		if err != nil || got != tc.want {
			t.Errorf("%s at %s: wait %v, %v; want %v", tc.name, tc.now, got, err, tc.want)
		}
	}
	for _, bad := range []string{"every day", "@every 1h", "CRON_TZ=Europe/Paris 0 22 * * *", "0 0 22 * * *"} {
		if _, err := windowWait(windows(esv1.SyncWindowDeny, bad, time.Hour), at("12:00")); !errors.Is(err, errBadSyncWindow) {
			t.Errorf("schedule %q: %v, want errBadSyncWindow", bad, err)
		}
	}
}
