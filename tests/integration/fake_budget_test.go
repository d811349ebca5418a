package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
)

// waitPushReady waits for a PushSecret's Ready condition to have status,
// with a message holding msg.
func waitPushReady(t *testing.T, ps *esv1alpha1.PushSecret, status metav1.ConditionStatus, msg string) {
	t.Helper()
	eventuallyWithin(t, 60*time.Second, fmt.Sprintf("PushSecret %s Ready=%s (%q)", ps.Name, status, msg), func() error {
		var got esv1alpha1.PushSecret
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(ps), &got); err != nil {
			return err
		}
		c := meta.FindStatusCondition(got.Status.Conditions, "Ready")
		if c == nil {
			return fmt.Errorf("no Ready condition")
		}
		if c.Status != status || !strings.Contains(c.Message, msg) {
			return fmt.Errorf("Ready=%s/%s: %s", c.Status, c.Reason, c.Message)
		}
		return nil
	})
}

// TestFakePushBudgetPerTenant: Fake keeps pushed values in eso's memory,
// within 2 MiB per configuration, 8 MiB per namespace and 64 MiB in all.
// A tenant that fills its namespace's share is refused past it while
// another tenant still pushes (one tenant cannot take the whole); once the
// tenant deletes one of its configurations, what it pushed is released and
// the tenant's next push fits.
func TestFakePushBudgetPerTenant(t *testing.T) {
	ctx := context.Background()
	runEso(t, testConfig())
	mallory := env.Namespace(t, "budget-mallory", nil)
	bob := env.Namespace(t, "budget-bob", nil)
	// Just under 1 MiB: two fill a configuration's 2 MiB, eight a
	// namespace's 8 MiB.
	big := strings.Repeat("x", 1_000_000)
	const configs = 4 // of 2 values each: 8,000,000 bytes, under 8 MiB
	store := func(ns, name string) {
		create(t, fakeConfig(ns, name, nil), secretStore(ns, name, storeSpec("Fake", name, "")))
		waitReady(t, &ssv2.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, metav1.ConditionTrue, ssv2.ReasonValid)
	}
	pushTo := func(ns, name, storeName, remoteKey string) *esv1alpha1.PushSecret {
		ps := pushSecret(ns, name, "big", []string{storeName}, pushed("v", remoteKey, ""))
		ps.Spec.RefreshInterval = &metav1.Duration{Duration: 2 * time.Second}
		create(t, ps)
		return ps
	}
	create(t, plainSecret(mallory, "big", map[string]string{"v": big}), plainSecret(bob, "big", map[string]string{"v": big}))
	for i := range configs {
		store(mallory, fmt.Sprint("f", i))
	}
	store(mallory, "one-more")
	store(bob, "f")

	var fills []*esv1alpha1.PushSecret
	for i := range configs {
		for k := range 2 {
			fills = append(fills, pushTo(mallory, fmt.Sprintf("fill-%d-%d", i, k), fmt.Sprint("f", i), fmt.Sprint("k", k)))
		}
	}
	for _, ps := range fills {
		waitPushReady(t, ps, metav1.ConditionTrue, "")
	}

	// Past the namespace's share: refused, though the whole has room.
	over := pushTo(mallory, "over", "one-more", "k")
	waitPushReady(t, over, metav1.ConditionFalse, "the Fake configurations of a namespace hold at most 8388608 pushed bytes")

	// Another tenant is not held back.
	waitPushReady(t, pushTo(bob, "push", "f", "k"), metav1.ConditionTrue, "")

	// Deleting a configuration releases what it pushed: the refused push
	// now fits.
	for k := range 2 {
		if err := env.Client.Delete(ctx, fills[k]); err != nil {
			t.Fatal(err)
		}
	}
	if err := env.Client.Delete(ctx, &provv1.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: mallory, Name: "f0"}}); err != nil {
		t.Fatal(err)
	}
	waitPushReady(t, over, metav1.ConditionTrue, "")
}
