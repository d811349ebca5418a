package pushsecret

import (
	"errors"
	"fmt"
	"testing"
	"time"

	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	"github.com/eso-dev/eso/app/outcomes"
	"github.com/eso-dev/eso/app/secrettemplate"
)

// TestRetryPace: a template past its time bound is tried again at the
// recheck's pace, one past another bound waits for the refresh (an edit
// fixes it), and anything else backs off.
func TestRetryPace(t *testing.T) {
	ps := &esv1alpha1.PushSecret{}
	transient := errors.New("connection reset by peer")
	for _, tc := range []struct {
		cause error
		after time.Duration
		err   error
	}{
		{fmt.Errorf("rendering: %w", secrettemplate.ErrRenderTime), outcomes.RecheckInterval, nil},
		{fmt.Errorf("rendering: %w", secrettemplate.ErrBudget), refreshInterval(ps), nil},
		{transient, 0, transient},
	} {
		res, err := (&Reconciler{}).retry(ps, tc.cause)
		if res.RequeueAfter != tc.after || !errors.Is(err, tc.err) {
			t.Errorf("retry(%v) = %v, %v; want after %s, error %v", tc.cause, res.RequeueAfter, err, tc.after, tc.err)
		}
	}
}
