//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

var externalSecrets = schema.GroupVersionResource{Group: "external-secrets.io", Version: "v1", Resource: "externalsecrets"}

// installFromBundle loads the bundle's image into the node and installs its
// chart as release eso, never pulling, with extra helm arguments.
func installFromBundle(t *testing.T, root string, extra ...string) {
	t.Helper()
	archives, _ := filepath.Glob(filepath.Join(root, "images", "eso-*-linux-amd64.tar"))
	charts, _ := filepath.Glob(filepath.Join(root, "charts", "eso-[0-9]*.tgz"))
	if len(archives) != 1 || len(charts) != 1 {
		t.Fatalf("the bundle holds images %v and charts %v, want one each", archives, charts)
	}
	if err := cluster.ImportImage(context.Background(), archives[0]); err != nil {
		t.Fatal(err)
	}
	shell(t, root, "helm install "+esoRelease+" "+shellQuote(charts[0])+" --namespace "+esoNamespace+
		" --create-namespace --set image.airgapped=true --wait --timeout 3m "+shellQuote(extra...))
	waitAvailable(t, esoNamespace, "app.kubernetes.io/instance="+esoRelease)
}

// fleet is a set of ExternalSecrets, each syncing one key of an
// upstream-style Fake SecretStore in its namespace to a Secret of its name.
type fleet struct {
	namespaces []string
	perNS      int
	refresh    string
}

// syncFleet creates count ExternalSecrets over namespaces of 20 and waits
// until every one is Ready with its Secret written.
func syncFleet(t *testing.T, count int, refresh string) *fleet {
	t.Helper()
	f := &fleet{perNS: 20, refresh: refresh}
	for i := 0; i*f.perNS < count; i++ {
		f.namespaces = append(f.namespaces, fmt.Sprintf("fleet-%d", i))
	}
	var docs []string
	for _, ns := range f.namespaces {
		docs = append(docs, f.manifests(ns, "v1"))
	}
	apply(t, strings.Join(docs, "---\n"))
	f.waitReady(t, 2*time.Minute)
	return f
}

// manifests are one namespace's store, holding value version for every
// key, and its ExternalSecrets.
func (f *fleet) manifests(ns, version string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n---\n", ns)
	b.WriteString(f.store(ns, version, nil))
	for i := range f.perNS {
		fmt.Fprintf(&b, `---
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: es-%d, namespace: %s}
spec:
  refreshInterval: %s
  secretStoreRef: {kind: SecretStore, name: fake}
  target: {name: es-%d}
  data:
  - secretKey: value
    remoteRef: {key: key-%d}
`, i, ns, f.refresh, i, i)
	}
	return b.String()
}

// store is namespace ns's SecretStore: key-i holds value-i-version, or
// changed[i] where given.
func (f *fleet) store(ns, version string, changed map[int]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: external-secrets.io/v1\nkind: SecretStore\nmetadata: {name: fake, namespace: %s}\nspec:\n  provider:\n    fake:\n      data:\n", ns)
	for i := range f.perNS {
		value, ok := changed[i]
		if !ok {
			value = fmt.Sprintf("value-%d-%s", i, version)
		}
		fmt.Fprintf(&b, "      - {key: key-%d, value: %s}\n", i, value)
	}
	return b.String()
}

// notReady lists the fleet's ExternalSecrets that are not Ready, and why.
func (f *fleet) notReady(ctx context.Context) ([]string, error) {
	dyn := cluster.Dynamic
	var bad []string
	for _, ns := range f.namespaces {
		list, err := dyn.Resource(externalSecrets).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		if len(list.Items) != f.perNS {
			bad = append(bad, fmt.Sprintf("%s: %d ExternalSecrets", ns, len(list.Items)))
		}
		for _, es := range list.Items {
			if ok, why := readyCondition(&es); !ok {
				bad = append(bad, ns+"/"+es.GetName()+": "+why)
			}
		}
	}
	return bad, nil
}

func (f *fleet) waitReady(t *testing.T, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, "every ExternalSecret Ready", func() error {
		bad, err := f.notReady(context.Background())
		if err != nil {
			return err
		}
		if len(bad) > 0 {
			return fmt.Errorf("%d not Ready, e.g. %s", len(bad), bad[0])
		}
		return nil
	})
}

// readyCondition reads an ExternalSecret's Ready condition.
func readyCondition(es *unstructured.Unstructured) (bool, string) {
	conds, _, _ := unstructured.NestedSlice(es.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Ready" {
			return m["status"] == "True", fmt.Sprintf("%v: %v", m["reason"], m["message"])
		}
	}
	return false, "no Ready condition"
}

// recorder watches, from its start until stop, every write to a Secret and
// every ExternalSecret status that is not Ready in namespaces: what a user
// would see go wrong during an upgrade or a fault.
type recorder struct {
	mu       sync.Mutex
	writes   map[string]int // namespace/name → updates and deletes
	changes  map[string]string
	emptied  []string
	notReady []string
	stopCh   chan struct{}
}

func record(t *testing.T, namespaces []string) *recorder {
	t.Helper()
	r := &recorder{writes: map[string]int{}, changes: map[string]string{}, stopCh: make(chan struct{})}
	dyn := cluster.Dynamic
	for _, ns := range namespaces {
		secrets := informers.NewSharedInformerFactoryWithOptions(cluster.Client, 0, informers.WithNamespace(ns)).Core().V1().Secrets().Informer()
		_, _ = secrets.AddEventHandler(cache.ResourceEventHandlerFuncs{
			UpdateFunc: func(oldObj, newObj any) {
				o, n := oldObj.(*corev1.Secret), newObj.(*corev1.Secret)
				if o.ResourceVersion == n.ResourceVersion {
					return // a relist, not a write
				}
				r.mu.Lock()
				defer r.mu.Unlock()
				r.writes[ns+"/"+n.Name]++
				r.changes[ns+"/"+n.Name] = describeChange(o, n)
				if len(n.Data) == 0 {
					r.emptied = append(r.emptied, ns+"/"+n.Name)
				}
			},
			DeleteFunc: func(obj any) {
				if s, ok := obj.(*corev1.Secret); ok {
					r.mu.Lock()
					defer r.mu.Unlock()
					r.writes[ns+"/"+s.Name]++
					r.emptied = append(r.emptied, ns+"/"+s.Name+" (deleted)")
				}
			},
		})
		ess := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, ns, nil).ForResource(externalSecrets).Informer()
		_, _ = ess.AddEventHandler(cache.ResourceEventHandlerFuncs{
			UpdateFunc: func(oldObj, newObj any) {
				es := newObj.(*unstructured.Unstructured)
				if oldObj.(*unstructured.Unstructured).GetResourceVersion() == es.GetResourceVersion() {
					return // a relist (a CRD update restarts the watch), not a write
				}
				if ok, why := readyCondition(es); !ok {
					r.mu.Lock()
					defer r.mu.Unlock()
					r.notReady = append(r.notReady, ns+"/"+es.GetName()+": "+why)
				}
			},
		})
		go secrets.Run(r.stopCh)
		go ess.Run(r.stopCh)
		if !cache.WaitForCacheSync(r.stopCh, secrets.HasSynced, ess.HasSynced) {
			t.Fatal("recorder: caches did not sync")
		}
	}
	t.Cleanup(r.stop)
	return r
}

func (r *recorder) stop() {
	select {
	case <-r.stopCh:
	default:
		close(r.stopCh)
	}
}

// check fails t for every write outside allowed (namespace/name → how many
// writes it may see), every emptied or deleted Secret and every
// ExternalSecret seen not Ready.
func (r *recorder) check(t *testing.T, allowed map[string]int) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	var unexpected []string
	for name, n := range r.writes {
		if n != allowed[name] {
			unexpected = append(unexpected, fmt.Sprintf("%s written %d times, want %d (last: %s)", name, n, allowed[name], r.changes[name]))
		}
	}
	for name, n := range allowed {
		if r.writes[name] != n {
			if _, seen := r.writes[name]; !seen {
				unexpected = append(unexpected, fmt.Sprintf("%s written 0 times, want %d", name, n))
			}
		}
	}
	slices.Sort(unexpected)
	if len(unexpected) > 0 {
		t.Errorf("Secret writes: %d unexpected, e.g. %s", len(unexpected), strings.Join(unexpected[:min(5, len(unexpected))], "; "))
	}
	if len(r.emptied) > 0 {
		t.Errorf("Secrets emptied or deleted: %v", r.emptied[:min(5, len(r.emptied))])
	}
	if len(r.notReady) > 0 {
		t.Errorf("ExternalSecrets seen not Ready: %d, e.g. %s", len(r.notReady), strings.Join(r.notReady[:min(3, len(r.notReady))], "; "))
	}
}

// describeChange names what a write changed in a Secret: metadata keys,
// owners, type and data keys, never values.
func describeChange(o, n *corev1.Secret) string {
	var parts []string
	diffKeys := func(what string, a, b map[string]string) {
		for k, v := range b {
			if av, ok := a[k]; !ok || av != v {
				parts = append(parts, what+" "+k+" set")
			}
		}
		for k := range a {
			if _, ok := b[k]; !ok {
				parts = append(parts, what+" "+k+" removed")
			}
		}
	}
	diffKeys("label", o.Labels, n.Labels)
	diffKeys("annotation", o.Annotations, n.Annotations)
	if !equality.Semantic.DeepEqual(o.OwnerReferences, n.OwnerReferences) {
		parts = append(parts, "owners")
	}
	if !slices.Equal(o.Finalizers, n.Finalizers) {
		parts = append(parts, "finalizers")
	}
	if o.Type != n.Type {
		parts = append(parts, "type")
	}
	for k, v := range n.Data {
		if ov, ok := o.Data[k]; !ok || string(ov) != string(v) {
			parts = append(parts, "data "+k)
		}
	}
	for k := range o.Data {
		if _, ok := n.Data[k]; !ok {
			parts = append(parts, "data "+k+" removed")
		}
	}
	if len(parts) == 0 {
		return "nothing visible"
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// waitSecretValue waits until Secret ns/name holds want under key, saying
// the ExternalSecret of that name's state while it does not.
func waitSecretValue(t *testing.T, timeout time.Duration, ns, name, key, want string) {
	t.Helper()
	ctx := context.Background()
	eventually(t, timeout, "Secret "+ns+"/"+name+" holding the expected "+key, func() error {
		s, err := cluster.Client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("%v; ExternalSecret: %s", err, esReady(ctx, ns, name))
		}
		if string(s.Data[key]) != want {
			return fmt.Errorf("%s is %d bytes, not the expected %d; ExternalSecret: %s", key, len(s.Data[key]), len(want), esReady(ctx, ns, name))
		}
		return nil
	})
}
