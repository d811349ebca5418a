package integration

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	genkinds "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	upgen "github.com/eso-dev/eso/apis/upstreamv1/generators"
)

// TestMigrateMovesUpstreamGenerators: `eso migrate --apply` moves upstream's
// generator objects to eso's kinds of the same name and deletes them, and
// leaves the ExternalSecrets referencing them as they are: one that
// refreshes hourly keeps the value it had (nothing generated again because
// of the move), one that refreshes every second goes on generating through
// eso's kind, and an MFA keeps upstream's SHA-1 although its spec names
// sha256.
func TestMigrateMovesUpstreamGenerators(t *testing.T) {
	runEso(t, testConfig())
	ns := env.Namespace(t, "migrate-gen", nil)
	applyYAML(t, ns, `
apiVersion: generators.external-secrets.io/v1alpha1
kind: Password
metadata: {name: db}
spec: {length: 16, digits: 4, symbols: 0, noUpper: false, allowRepeat: true}
---
apiVersion: v1
kind: Secret
metadata: {name: totp-seed}
stringData: {token: GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ}
---
apiVersion: generators.external-secrets.io/v1alpha1
kind: MFA
metadata: {name: totp}
spec: {secret: {name: totp-seed, key: token}, length: 8, algorithm: sha256, when: "2005-03-18T01:58:29Z"}
`)
	ref := func(kind, name string) esv1.GeneratorRef {
		return esv1.GeneratorRef{APIVersion: "generators.external-secrets.io/v1alpha1", Kind: kind, Name: name}
	}
	hourly := generatedSecret(ns, "hourly", ref("Password", "db"))
	everySecond := generatedSecret(ns, "every-second", ref("Password", "db"))
	everySecond.Spec.RefreshInterval.Duration = time.Second
	mfa := generatedSecret(ns, "mfa", ref("MFA", "totp"))
	mfa.Spec.RefreshInterval.Duration = time.Second
	create(t, hourly, everySecond, mfa)
	before := waitGenerated(t, ns, "hourly", "password", "")
	waitGenerated(t, ns, "every-second", "password", "")
	waitGenerated(t, ns, "mfa", "token", "")
	generations := map[string]int64{}
	for _, es := range []*esv1.ExternalSecret{hourly, everySecond, mfa} {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(es), es); err != nil {
			t.Fatal(err)
		}
		generations[es.Name] = es.Generation
	}

	runMigrate(t, "--namespace", ns, "--apply")

	for _, gone := range []client.Object{
		&upgen.Password{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}},
		&upgen.MFA{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "totp"}},
	} {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(gone), gone); !apierrors.IsNotFound(err) {
			t.Errorf("upstream %T %s still there: %v", gone, gone.GetName(), err)
		}
	}
	var moved genkinds.Password
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "db"}, &moved); err != nil || moved.Spec.Length != 16 {
		t.Fatalf("eso's Password db: %v, length %d", err, moved.Spec.Length)
	}
	// A value made after the move comes from eso's kind.
	last := waitGenerated(t, ns, "every-second", "password", "")
	waitGenerated(t, ns, "every-second", "password", string(last.Data["password"]))
	if m := waitGenerated(t, ns, "mfa", "token", ""); string(m.Data["token"]) != "07081804" {
		t.Errorf("MFA after the move: token %q, want upstream's SHA-1 07081804", m.Data["token"])
	}
	var after corev1.Secret
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "hourly"}, &after); err != nil {
		t.Fatal(err)
	}
	if string(after.Data["password"]) != string(before.Data["password"]) || after.ResourceVersion != before.ResourceVersion {
		t.Error("the hourly ExternalSecret's Secret was written again by the move")
	}
	for _, es := range []*esv1.ExternalSecret{hourly, everySecond, mfa} {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(es), es); err != nil {
			t.Fatal(err)
		}
		if es.Generation != generations[es.Name] {
			t.Errorf("ExternalSecret %s was edited by the move (generation %d, was %d)", es.Name, es.Generation, generations[es.Name])
		}
	}

	// Back: the upstream objects are created again from the copies, for an
	// upstream ESO to find; eso's copies stay.
	runMigrate(t, "--namespace", ns, "--rollback", "--apply")
	var restored upgen.Password
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "db"}, &restored); err != nil || restored.Spec.Length != 16 {
		t.Fatalf("upstream's Password db after the rollback: %v, length %d", err, restored.Spec.Length)
	}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "db"}, &moved); err != nil {
		t.Errorf("eso's copy after the rollback: %v", err)
	}
}
