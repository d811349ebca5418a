package externalsecret

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
)

// errBadSyncWindow: a sync window's schedule does not parse.
var errBadSyncWindow = errors.New("invalid sync window")

// scheduleParser reads five cron fields or a descriptor (@daily, ...):
// below, no "@every" (its windows open relative to whenever eso looks, so
// they drift) and no time zone prefixes (windows are in UTC).
var scheduleParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

func parseSchedule(spec string) (cron.Schedule, error) {
	if strings.Contains(spec, "TZ=") {
		return nil, errors.New("time zones are not accepted: schedules are in UTC")
	}
	if strings.HasPrefix(spec, "@every") {
		return nil, errors.New("@every is not accepted: its windows would drift; give a cron schedule")
	}
	return scheduleParser.Parse(spec)
}

// windowWait says whether the sync windows allow a refresh at now and, if
// not, how long until they do.
func windowWait(sw *esv1.SyncWindows, now time.Time) (time.Duration, error) {
	if sw == nil || len(sw.Windows) == 0 {
		return 0, nil
	}
	windows := sw.Windows
	now = now.UTC()
	var wait time.Duration
	hasAllow, allowOpen := false, false
	var nextAllow time.Time
	for i, w := range windows {
		sched, err := parseSchedule(w.Schedule)
		if err != nil {
			return 0, fmt.Errorf("%w: syncWindows.windows[%d].schedule: %v", errBadSyncWindow, i, err)
		}
		if w.Duration.Duration <= 0 {
			return 0, fmt.Errorf("%w: syncWindows.windows[%d].duration must be positive", errBadSyncWindow, i)
		}
		// The window that opened last before now, if any, is still open when
		// it opened less than its duration ago.
		opened := sched.Next(now.Add(-w.Duration.Duration))
		open := !opened.After(now)
		switch sw.Kind {
		case esv1.SyncWindowDeny:
			if open {
				wait = max(wait, opened.Add(w.Duration.Duration).Sub(now))
			}
		case esv1.SyncWindowAllow:
			hasAllow = true
			allowOpen = allowOpen || open
			if next := sched.Next(now); nextAllow.IsZero() || next.Before(nextAllow) {
				nextAllow = next
			}
		}
	}
	if hasAllow && !allowOpen {
		wait = max(wait, nextAllow.Sub(now))
	}
	return wait, nil
}
