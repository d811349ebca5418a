package integration

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	genv2 "github.com/eso-dev/eso/apis/generator/v2alpha1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/apis/upstreamv1/v1stores"
)

const waitTimeout = 20 * time.Second

// eventually polls cond until it returns nil or the timeout passes.
func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	eventuallyWithin(t, waitTimeout, what, cond)
}

// eventuallyWithin polls cond until it returns nil or d passes.
func eventuallyWithin(t *testing.T, d time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	var err error
	for time.Now().Before(deadline) {
		if err = cond(); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("timed out after %v waiting for %s: %v", d, what, err)
}

// consistently checks cond stays nil for d: for facts that must hold while
// eso has every chance to break them.
func consistently(t *testing.T, d time.Duration, what string, cond func() error) {
	t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if err := cond(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

func fakeConfig(ns, name string, data map[string]string) *provv1.Fake {
	f := &provv1.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	for k, v := range data {
		f.Spec.Data = append(f.Spec.Data, provv1.FakeSecret{Key: k, Value: v})
	}
	return f
}

func storeSpec(kind, name, ns string) ssv2.SecretStoreSpec {
	return ssv2.SecretStoreSpec{ProviderConfig: ssv2.ProviderConfig{
		ProviderRef: ssv2.ProviderRef{Kind: kind, Name: name, Namespace: ns},
	}}
}

func secretStore(ns, name string, spec ssv2.SecretStoreSpec) *ssv2.SecretStore {
	return &ssv2.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}
}

func clusterStore(name string, spec ssv2.ClusterSecretStoreSpec) *ssv2.ClusterSecretStore {
	return &ssv2.ClusterSecretStore{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
}

// externalSecret maps remote key/property pairs ("key" or "key:property") to Secret keys.
func externalSecret(ns, name, storeKind, store string, data map[string]esv1.ExternalSecretDataRemoteRef) *esv1.ExternalSecret {
	es := &esv1.ExternalSecret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: esv1.ExternalSecretSpec{
			SecretStoreRef:  &esv1.SecretStoreRef{Name: store, Kind: storeKind},
			RefreshInterval: &metav1.Duration{Duration: time.Hour},
		},
	}
	for k, ref := range data {
		es.Spec.Data = append(es.Spec.Data, esv1.ExternalSecretData{SecretKey: k, RemoteRef: ref})
	}
	return es
}

func ref(key, property string) esv1.ExternalSecretDataRemoteRef {
	return esv1.ExternalSecretDataRemoteRef{Key: key, Property: property}
}

func plainSecret(ns, name string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// waitSecretData waits until Secret ns/name holds exactly want.
func waitSecretData(t *testing.T, ns, name string, want map[string]string) *corev1.Secret {
	t.Helper()
	var s corev1.Secret
	eventually(t, "Secret "+ns+"/"+name+" to hold the expected data", func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil {
			return err
		}
		if len(s.Data) != len(want) {
			return fmt.Errorf("has keys %v", keys(s.Data))
		}
		for k, v := range want {
			if string(s.Data[k]) != v {
				return fmt.Errorf("key %s differs", k)
			}
		}
		return nil
	})
	return &s
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// waitReady waits until obj's Ready condition has status and reason, and
// returns its message. For an ExternalSecret, a reason of eso's own (not
// upstream's vocabulary) is looked for on Synced, and Ready must then say
// SecretSyncedError.
func waitReady(t *testing.T, obj client.Object, status metav1.ConditionStatus, reason string) string {
	t.Helper()
	return waitReadyWithin(t, waitTimeout, obj, status, reason)
}

// waitReadyWithin is waitReady with a wait bound of d.
func waitReadyWithin(t *testing.T, d time.Duration, obj client.Object, status metav1.ConditionStatus, reason string) string {
	t.Helper()
	var msg string
	eventuallyWithin(t, d, fmt.Sprintf("%T %s Ready=%s/%s", obj, obj.GetName(), status, reason), func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		c := meta.FindStatusCondition(conditions(obj), "Ready")
		if c == nil {
			return fmt.Errorf("no Ready condition")
		}
		if _, ok := obj.(*esv1.ExternalSecret); ok && !upstreamReadyReasons[reason] {
			if c.Status != status || c.Reason != esv1.ReasonSecretSyncedError {
				return fmt.Errorf("Ready=%s/%s, want %s/%s: %s", c.Status, c.Reason, status, esv1.ReasonSecretSyncedError, c.Message)
			}
			if c = meta.FindStatusCondition(conditions(obj), esv1.ConditionSynced); c == nil {
				return fmt.Errorf("no Synced condition")
			}
		}
		if c.Status != status || c.Reason != reason {
			return fmt.Errorf("%s=%s/%s: %s", c.Type, c.Status, c.Reason, c.Message)
		}
		msg = c.Message
		return nil
	})
	return msg
}

// upstreamReadyReasons are the reasons an ExternalSecret's Ready condition takes.
var upstreamReadyReasons = map[string]bool{esv1.ReasonSecretSynced: true, esv1.ReasonSecretSyncedError: true,
	esv1.ReasonSecretDeleted: true, esv1.ReasonSecretMissing: true}

func conditions(obj client.Object) []metav1.Condition {
	switch o := obj.(type) {
	case *esv1.ExternalSecret:
		return o.Status.Conditions
	case *ssv2.SecretStore:
		return o.Status.Conditions
	case *ssv2.ClusterSecretStore:
		return o.Status.Conditions
	case *esv1.ClusterExternalSecret:
		return o.Status.Conditions
	case *esv1alpha1.PushSecret:
		return o.Status.Conditions
	case *esv1alpha1.ClusterPushSecret:
		return o.Status.Conditions
	case *genv2.Generator:
		return o.Status.Conditions
	case *genv2.ClusterGenerator:
		return o.Status.Conditions
	case *v1stores.SecretStore:
		return o.Status.Conditions
	case *v1stores.ClusterSecretStore:
		return o.Status.Conditions
	}
	return nil
}

func secretExists(t *testing.T, ns, name string) bool {
	t.Helper()
	err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &corev1.Secret{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// annotate sets one annotation of obj; on an ExternalSecret any annotation
// change (upstream's force-sync) makes it sync now.
func annotate(t *testing.T, obj client.Object, key, value string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, key, value)
	if err := env.Client.Patch(context.Background(), obj, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
}

// requireUnchanged fails t unless the Secret is exactly as synced was:
// same resourceVersion, same data (an outage must not touch it).
func requireUnchanged(t *testing.T, synced *corev1.Secret) {
	t.Helper()
	var now corev1.Secret
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(synced), &now); err != nil {
		t.Fatal(err)
	}
	if now.ResourceVersion != synced.ResourceVersion || !maps.EqualFunc(now.Data, synced.Data, bytes.Equal) {
		t.Fatalf("Secret %s changed: resourceVersion %s -> %s", synced.Name, synced.ResourceVersion, now.ResourceVersion)
	}
}
