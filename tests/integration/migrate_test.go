package integration

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/apis/upstreamv1/v1stores"
	"github.com/eso-dev/eso/app/v1compat/migrate"
	"github.com/eso-dev/eso/providers/vault/vaulttest"
)

// runMigrate runs `eso migrate args...` against the test cluster as its
// administrator and returns what it printed.
func runMigrate(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	code := migrate.Run(args, &out, &errOut, func(string, *runtime.Scheme) (client.Client, error) { return env.Client, nil })
	if code != 0 {
		t.Fatalf("eso migrate %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errOut.String())
	}
	return out.String()
}

// TestMigrateWithoutFlapping is the upgrade path on a running eso: 100
// ExternalSecrets synced through a v1 SecretStore and a v1
// ClusterSecretStore, written as upstream writes them; `eso migrate` (a dry
// run, then --apply) moves them to v2alpha1 stores; --rollback moves them
// back and a second --apply forward again; then the v1 stores are deleted.
// Throughout, no target Secret is written: each keeps its data and its
// resourceVersion, and a watch on the namespace sees no change.
func TestMigrateWithoutFlapping(t *testing.T) {
	runEso(t, testConfig())
	ns := env.Namespace(t, "migrate", nil)
	const count = 100
	var data strings.Builder
	for i := range count {
		fmt.Fprintf(&data, "        - {key: key-%d, value: value-%d}\n", i, i)
	}
	cssName := "migrate-" + ns
	applyYAML(t, ns, fmt.Sprintf(`
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: team}
spec:
  provider:
    fake:
      data:
%[1]s
---
apiVersion: external-secrets.io/v1
kind: ClusterSecretStore
metadata: {name: %[2]s}
spec:
  conditions: [{namespaces: [%[3]s]}]
  provider:
    fake:
      data:
%[1]s
`, data.String(), cssName, ns))
	for i := range count {
		kind, store := "SecretStore", "team"
		if i%4 == 0 {
			kind, store = "ClusterSecretStore", cssName
		}
		applyYAML(t, ns, fmt.Sprintf(`
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: es-%[1]d}
spec:
  refreshInterval: 1h
  secretStoreRef: {kind: %[2]s, name: %[3]s}
  target: {name: secret-%[1]d}
  data: [{secretKey: value, remoteRef: {key: key-%[1]d}}]
`, i, kind, store))
	}
	synced := map[string]corev1.Secret{}
	eventuallyWithin(t, 60*time.Second, "all Secrets synced", func() error {
		var list corev1.SecretList
		if err := env.Client.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, s := range list.Items {
			synced[s.Name] = s
		}
		if len(synced) < count {
			return fmt.Errorf("%d of %d", len(synced), count)
		}
		return nil
	})
	for i := range count {
		if got := string(synced[fmt.Sprintf("secret-%d", i)].Data["value"]); got != fmt.Sprintf("value-%d", i) {
			t.Fatalf("secret-%d holds %q", i, got)
		}
	}

	// Every change to a Secret of the namespace from here on is a flap.
	w, err := watchSecrets(ns, synced)
	if err != nil {
		t.Fatal(err)
	}
	defer w.stop()

	plan := runMigrate(t, "--namespace", ns, "--cluster-config-namespace", ns)
	for _, want := range []string{
		"create   Fake.provider.secretstore.external-secrets.io/v2alpha1 " + ns + "/team",
		"create   SecretStore.secretstore.external-secrets.io/v2alpha1 " + ns + "/team",
		"create   ClusterSecretStore.secretstore.external-secrets.io/v2alpha1 " + cssName,
		"change   ExternalSecret " + ns + "/es-1: spec.secretStoreRef.apiVersion: \"\" -> \"secretstore.external-secrets.io/v2alpha1\"",
		"(dry run: nothing changed",
	} {
		if !strings.Contains(plan, want) {
			t.Errorf("the dry run does not say %q:\n%s", want, plan)
		}
	}
	requireAPIVersions(t, ns, count, "")

	runMigrate(t, "--namespace", ns, "--cluster-config-namespace", ns, "--apply")
	requireAPIVersions(t, ns, count, esv1.StoreAPIVersionV2Alpha1)
	settleAndCheck(t, ns, count, w)

	runMigrate(t, "--namespace", ns, "--rollback", "--apply")
	requireAPIVersions(t, ns, count, esv1.StoreAPIVersionV1)
	settleAndCheck(t, ns, count, w)

	runMigrate(t, "--namespace", ns, "--cluster-config-namespace", ns, "--apply")
	requireAPIVersions(t, ns, count, esv1.StoreAPIVersionV2Alpha1)
	settleAndCheck(t, ns, count, w)

	// The v1 stores go; nothing notices.
	for _, obj := range []client.Object{
		&v1stores.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team"}},
		&v1stores.ClusterSecretStore{ObjectMeta: metav1.ObjectMeta{Name: cssName}},
	} {
		if err := env.Client.Delete(context.Background(), obj); err != nil {
			t.Fatal(err)
		}
	}
	settleAndCheck(t, ns, count, w)
	waitReady(t, &ssv2.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team"}}, metav1.ConditionTrue, ssv2.ReasonValid)
}

// requireAPIVersions checks every ExternalSecret of ns names its store with apiVersion.
func requireAPIVersions(t *testing.T, ns string, count int, apiVersion string) {
	t.Helper()
	var list esv1.ExternalSecretList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != count {
		t.Fatalf("%d ExternalSecrets, want %d", len(list.Items), count)
	}
	for _, es := range list.Items {
		if got := es.Spec.SecretStoreRef.APIVersion; got != apiVersion {
			t.Fatalf("%s names its store with apiVersion %q, want %q", es.Name, got, apiVersion)
		}
	}
}

// settleAndCheck waits until every ExternalSecret of ns is Ready for its
// current generation, gives eso time to act on anything left, and fails if
// a Secret of ns changed at any point.
func settleAndCheck(t *testing.T, ns string, count int, w *secretWatch) {
	t.Helper()
	eventuallyWithin(t, 60*time.Second, "every ExternalSecret Ready for its generation", func() error {
		var list esv1.ExternalSecretList
		if err := env.Client.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, es := range list.Items {
			ok := false
			for _, c := range es.Status.Conditions {
				if c.Type == "Ready" && c.Status == metav1.ConditionTrue && c.ObservedGeneration == es.Generation {
					ok = true
				}
			}
			if !ok {
				return fmt.Errorf("%s not Ready at generation %d: %+v", es.Name, es.Generation, es.Status.Conditions)
			}
		}
		return nil
	})
	time.Sleep(2 * time.Second)
	if flaps := w.changes(); len(flaps) > 0 {
		t.Fatalf("target Secrets changed: %s", strings.Join(flaps, "; "))
	}
	for i := range count {
		var s corev1.Secret
		name := fmt.Sprintf("secret-%d", i)
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil {
			t.Fatal(err)
		}
		if s.ResourceVersion != w.initial[name].ResourceVersion || string(s.Data["value"]) != fmt.Sprintf("value-%d", i) {
			t.Fatalf("%s is at resourceVersion %s holding %q; it was %s", name, s.ResourceVersion, s.Data["value"], w.initial[name].ResourceVersion)
		}
	}
}

// secretWatch records every change to the Secrets of a namespace after
// the versions it started from.
type secretWatch struct {
	initial map[string]corev1.Secret
	w       watch.Interface
	mu      sync.Mutex
	seen    []string
	done    chan struct{}
}

func watchSecrets(ns string, initial map[string]corev1.Secret) (*secretWatch, error) {
	var list corev1.SecretList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		return nil, err
	}
	w, err := wc.Watch(context.Background(), &corev1.SecretList{}, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	if err != nil {
		return nil, err
	}
	sw := &secretWatch{initial: initial, w: w, done: make(chan struct{})}
	go func() {
		defer close(sw.done)
		for ev := range w.ResultChan() {
			if s, ok := ev.Object.(*corev1.Secret); ok {
				sw.mu.Lock()
				sw.seen = append(sw.seen, fmt.Sprintf("%s %s at %s", ev.Type, s.Name, s.ResourceVersion))
				sw.mu.Unlock()
			} else if st, ok := ev.Object.(*metav1.Status); ok && !apierrors.IsGone(apierrors.FromObject(st)) {
				sw.mu.Lock()
				sw.seen = append(sw.seen, "watch error: "+st.Message)
				sw.mu.Unlock()
			}
		}
	}()
	return sw, nil
}

func (s *secretWatch) changes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

func (s *secretWatch) stop() {
	s.w.Stop()
	<-s.done
}

// TestMigrateKeepsPushes: a PushSecret with deletionPolicy Delete that
// selects its store by labels keeps what it pushed through a migration and
// the deletion of the v1 store: the v2alpha1 store carries the v1 store's
// labels, so it is still selected and nothing counts as dropped.
func TestMigrateKeepsPushes(t *testing.T) {
	vault := vaulttest.Start(t)
	runEso(t, testConfig())
	ns := env.Namespace(t, "migrate-push", nil)
	create(t, plainSecret(ns, "source", map[string]string{"token": "pushed-value"}),
		plainSecret(ns, "vault-token", map[string]string{"token": vault.Token()}))
	applyYAML(t, ns, fmt.Sprintf(`
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: shared, labels: {tier: shared}}
spec:
  provider:
    vault:
      server: %q
      path: secret
      auth: {tokenSecretRef: {name: vault-token, key: token}}
---
`, vault.Address())+`
apiVersion: external-secrets.io/v1alpha1
kind: PushSecret
metadata: {name: push}
spec:
  refreshInterval: 1s
  deletionPolicy: Delete
  secretStoreRefs: [{kind: SecretStore, labelSelector: {matchLabels: {tier: shared}}}]
  selector: {secret: {name: source}}
  data: [{match: {secretKey: token, remoteRef: {remoteKey: pushed, property: token}}}]
---
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: reads-pushed}
spec:
  refreshInterval: 1s
  secretStoreRef: {name: shared}
  target: {name: pushed-copy, deletionPolicy: Delete}
  data: [{secretKey: token, remoteRef: {key: pushed, property: token}}]
`)
	waitSecretData(t, ns, "pushed-copy", map[string]string{"token": "pushed-value"})
	runMigrate(t, "--namespace", ns, "--apply")
	if err := env.Client.Delete(context.Background(), &v1stores.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shared"}}); err != nil {
		t.Fatal(err)
	}
	var store ssv2.SecretStore
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "shared"}, &store); err != nil || store.Labels["tier"] != "shared" {
		t.Fatalf("the v2alpha1 store (%v) lacks the v1 store's labels: %v", err, store.Labels)
	}
	consistently(t, 5*time.Second, "the pushed value stays in the provider", func() error {
		var es esv1.ExternalSecret
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "reads-pushed"}, &es); err != nil {
			return err
		}
		for _, c := range es.Status.Conditions {
			if c.Type == esv1.ConditionReady && c.Status != metav1.ConditionTrue {
				return fmt.Errorf("the ExternalSecret reading it: %s %s", c.Reason, c.Message)
			}
		}
		var copied corev1.Secret
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "pushed-copy"}, &copied); err != nil {
			return err
		}
		if string(copied.Data["token"]) != "pushed-value" {
			return fmt.Errorf("the ExternalSecret reading it holds %q", copied.Data["token"])
		}
		return nil
	})
}
