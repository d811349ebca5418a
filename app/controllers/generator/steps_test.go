package generator

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/outcomes"
	"github.com/eso-dev/eso/providers/plugin"
)

// TestValidationOutcomes: what a generator's validation failure makes of
// its Ready condition and its next check, as the outcomes table says:
// refused credentials are checked again within 30 s, as for stores, since
// the Secrets holding them are not watched.
func TestValidationOutcomes(t *testing.T) {
	cases := map[string]struct {
		fail        error
		reason      string
		wantErr     bool
		wantRequeue time.Duration
	}{
		"valid":                   {reason: ssv2.ReasonValid, wantRequeue: 5 * time.Minute},
		"invalid configuration":   {fail: fmt.Errorf("%w: path", plugin.ErrInvalidConfig), reason: ssv2.ReasonInvalidProviderConfig, wantRequeue: 5 * time.Minute},
		"configuration not found": {fail: plugin.ErrConfigNotFound, reason: ssv2.ReasonProviderRefNotFound, wantRequeue: 5 * time.Minute},
		"credentials refused":     {fail: fmt.Errorf("%w: token revoked", plugin.ErrAuthFailed), reason: ssv2.ReasonAuthenticationFailed, wantRequeue: outcomes.RecheckInterval},
		"generator unreachable":   {fail: errors.New("connection refused"), reason: ssv2.ReasonValidationFailed, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := generatorIn("team-a", "gen", "")
			r, rec := reconciler(t, false, g)
			rec.fail = tc.fail
			res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(g)})
			if (err != nil) != tc.wantErr || res.RequeueAfter != tc.wantRequeue {
				t.Fatalf("Reconcile = %+v, %v; want requeue after %v, error %v", res, err, tc.wantRequeue, tc.wantErr)
			}
			if err := r.Client.Get(context.Background(), client.ObjectKeyFromObject(g), g); err != nil {
				t.Fatal(err)
			}
			if c := meta.FindStatusCondition(g.Status.Conditions, ssv2.ConditionReady); c == nil || c.Reason != tc.reason {
				t.Errorf("Ready %+v, want reason %s", c, tc.reason)
			}
		})
	}
}
