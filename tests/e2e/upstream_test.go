//go:build e2e

package e2e

import (
	"context"
	"crypto/sha3"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/eso-dev/eso/tests/testenv"
)

// upstreamHash is upstream ESO's data-hash and created-by value: SHA3-224 of
// what fmt prints for the object, in hex.
func upstreamHash(v any) string { return fmt.Sprintf("%x", sha3.Sum224([]byte(fmt.Sprintf("%+v", v)))) }

const upstreamNS, upstreamCESNS, upstreamGenNS = "upstream-team", "upstream-stamped", "upstream-generated"

// TestUpgradeFromUpstream prepares a cluster as upstream ESO leaves it, then
// follows the README's "Upgrading from upstream ESO" commands word for word:
// the CRDs change hands, every store, ExternalSecret, ClusterExternalSecret
// and PushSecret is Ready, and the Secrets upstream wrote are adopted with no
// write.
func TestUpgradeFromUpstream(t *testing.T) {
	ctx := context.Background()
	startCluster(t)
	root := unpackBundle(t)
	archives, _ := filepath.Glob(filepath.Join(root, "images", "eso-*-linux-amd64.tar"))
	if err := cluster.ImportImage(ctx, archives[0]); err != nil {
		t.Fatal(err)
	}
	fixture := filepath.Join(testenv.RepoRoot(), "tests", "e2e", "testdata", "upstream-eso")
	shell(t, root, "helm install external-secrets "+shellQuote(fixture)+" --namespace external-secrets --create-namespace --wait")
	prepareUpstreamObjects(t, ctx)
	// A later upstream: v1 stored, v1beta1 no longer served, its webhook on.
	shell(t, root, "helm upgrade external-secrets "+shellQuote(fixture)+" --namespace external-secrets --set storageVersion=v1 --set serveV1beta1=false --set webhook=true --wait")
	for _, crd := range []string{"externalsecrets", "secretstores", "clustersecretstores", "clusterexternalsecrets"} {
		stored := kubectl(t, "get", "crd", crd+".external-secrets.io", "-o", "jsonpath={.status.storedVersions}")
		if !strings.Contains(stored, "v1beta1") || !strings.Contains(stored, `"v1"`) {
			t.Fatalf("fixture: %s stored versions %s, want v1beta1 and v1", crd, stored)
		}
	}
	rec := record(t, []string{upstreamNS, upstreamCESNS})

	shell(t, root, readmeCommands(t, filepath.Join(testenv.RepoRoot(), "README.md"), "### Upgrading from upstream ESO"))

	waitAvailable(t, esoNamespace, "app.kubernetes.io/instance="+esoRelease)
	for _, obj := range []struct {
		resource, ns, name string
	}{
		{"secretstores", upstreamNS, "fake"},
		{"clustersecretstores", "", "shared"},
		{"externalsecrets", upstreamNS, "app-0"},
		{"externalsecrets", upstreamNS, "app-1"},
		{"externalsecrets", upstreamNS, "app-2"},
		{"externalsecrets", upstreamNS, "from-cluster-store"},
		{"clusterexternalsecrets", "", "stamped"},
		{"externalsecrets", upstreamCESNS, "stamped"},
		{"pushsecrets", upstreamNS, "push"},
		{"externalsecrets", upstreamGenNS, "generated"},
		{"externalsecrets", upstreamGenNS, "cluster-generated"},
	} {
		waitReady(t, ctx, obj.resource, obj.ns, obj.name)
	}
	time.Sleep(12 * time.Second) // two refreshes of every ExternalSecret
	rec.check(t, nil)

	crd := kubectl(t, "get", "crd", "externalsecrets.external-secrets.io", "-o",
		`jsonpath={.metadata.annotations.meta\.helm\.sh/release-name}/{.status.storedVersions}/{.spec.versions[?(@.name=="v1beta1")].served}`)
	if crd != `eso/["v1beta1","v1"]/false` {
		t.Errorf("externalsecrets CRD after the takeover: %s, want eso's, v1beta1 still stored and not served", crd)
	}
	if out := kubectl(t, "get", "validatingwebhookconfigurations,clusterroles", "-l", "app.kubernetes.io/instance=external-secrets", "-o", "name"); out != "" {
		t.Errorf("upstream's webhook or roles are still there: %s", out)
	}
	if out := shell(t, root, "helm list --all-namespaces --short"); strings.Contains(out, "external-secrets") {
		t.Errorf("Helm still lists upstream's release: %s", out)
	}
}

// prepareUpstreamObjects writes, as upstream would have (with the defaults
// its schemas fill in, which the open schemas here do not), a store of each
// scope, ExternalSecrets, a ClusterExternalSecret and the ExternalSecret it
// stamped, and a PushSecret, all while v1beta1 (v1alpha1 for PushSecret) is
// the storage version, and each target Secret with upstream's labels,
// annotations and owner.
func prepareUpstreamObjects(t *testing.T, ctx context.Context) {
	t.Helper()
	values := map[string]string{"app/0": "zero", "app/1": "one", "app/2": "two", "shared/key": "shared"}
	fake := func(keys ...string) string {
		var b strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&b, "      - {key: %s, value: %s}\n", k, values[k])
		}
		return b.String()
	}
	es := func(ns, name, storeKind, store, key string) string {
		return fmt.Sprintf(`---
apiVersion: external-secrets.io/v1beta1
kind: ExternalSecret
metadata: {name: %s, namespace: %s}
spec:
  refreshInterval: 5s
  secretStoreRef: {kind: %s, name: %s}
  target: {name: %s, creationPolicy: Owner, deletionPolicy: Retain}
  data:
  - secretKey: value
    remoteRef: {key: %s, conversionStrategy: Default, decodingStrategy: None, metadataPolicy: None}
`, name, ns, storeKind, store, name, key)
	}
	manifests := `apiVersion: v1
kind: Namespace
metadata: {name: ` + upstreamNS + `}
---
apiVersion: v1
kind: Namespace
metadata: {name: ` + upstreamGenNS + `}
---
# upstream's generators, whose CRDs eso takes over too
apiVersion: generators.external-secrets.io/v1alpha1
kind: Password
metadata: {name: db, namespace: ` + upstreamGenNS + `}
spec: {length: 16, digits: 4, symbols: 0, noUpper: false, allowRepeat: true}
---
apiVersion: generators.external-secrets.io/v1alpha1
kind: ClusterGenerator
metadata: {name: upstream-password}
spec:
  kind: Password
  generator:
    passwordSpec: {length: 24, digits: 4, symbols: 0, noUpper: false, allowRepeat: true}
---
apiVersion: external-secrets.io/v1beta1
kind: ExternalSecret
metadata: {name: generated, namespace: ` + upstreamGenNS + `}
spec:
  refreshInterval: 1h
  target: {name: generated}
  dataFrom:
  - sourceRef:
      generatorRef: {apiVersion: generators.external-secrets.io/v1alpha1, kind: Password, name: db}
---
apiVersion: external-secrets.io/v1beta1
kind: ExternalSecret
metadata: {name: cluster-generated, namespace: ` + upstreamGenNS + `}
spec:
  refreshInterval: 1h
  target: {name: cluster-generated}
  dataFrom:
  - sourceRef:
      generatorRef: {apiVersion: generators.external-secrets.io/v1alpha1, kind: ClusterGenerator, name: upstream-password}
---
apiVersion: v1
kind: Namespace
metadata: {name: ` + upstreamCESNS + `, labels: {team: stamped}}
---
apiVersion: external-secrets.io/v1beta1
kind: SecretStore
metadata: {name: fake, namespace: ` + upstreamNS + `}
spec:
  provider:
    fake:
      data:
` + fake("app/0", "app/1", "app/2") + `---
apiVersion: external-secrets.io/v1beta1
kind: ClusterSecretStore
metadata: {name: shared}
spec:
  provider:
    fake:
      data:
` + fake("shared/key") + es(upstreamNS, "app-0", "SecretStore", "fake", "app/0") +
		es(upstreamNS, "app-1", "SecretStore", "fake", "app/1") +
		es(upstreamNS, "app-2", "SecretStore", "fake", "app/2") +
		es(upstreamNS, "from-cluster-store", "ClusterSecretStore", "shared", "shared/key") + `---
apiVersion: external-secrets.io/v1beta1
kind: ClusterExternalSecret
metadata: {name: stamped}
spec:
  externalSecretName: stamped
  namespaceSelectors: [{matchLabels: {team: stamped}}]
  refreshTime: 1m
  externalSecretSpec:
    refreshInterval: 5s
    secretStoreRef: {kind: ClusterSecretStore, name: shared}
    target: {name: stamped, creationPolicy: Owner, deletionPolicy: Retain}
    data:
    - secretKey: value
      remoteRef: {key: shared/key, conversionStrategy: Default, decodingStrategy: None, metadataPolicy: None}
---
apiVersion: v1
kind: Secret
metadata: {name: push-source, namespace: ` + upstreamNS + `}
stringData: {token: pushed-by-upstream}
---
apiVersion: external-secrets.io/v1alpha1
kind: PushSecret
metadata: {name: push, namespace: ` + upstreamNS + `}
spec:
  refreshInterval: 5s
  secretStoreRefs: [{kind: SecretStore, name: fake}]
  selector: {secret: {name: push-source}}
  data:
  - match:
      secretKey: token
      remoteRef: {remoteKey: pushed/token}
`
	apply(t, manifests)

	// The ExternalSecret the ClusterExternalSecret stamped, as upstream
	// leaves it: owned by it and labelled with its name.
	dyn := cluster.Dynamic
	gvr := func(resource, version string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: "external-secrets.io", Version: version, Resource: resource}
	}
	ces, err := dyn.Resource(gvr("clusterexternalsecrets", "v1beta1")).Get(ctx, "stamped", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stamped := &unstructured.Unstructured{}
	stamped.SetAPIVersion("external-secrets.io/v1beta1")
	stamped.SetKind("ExternalSecret")
	stamped.SetNamespace(upstreamCESNS)
	stamped.SetName("stamped")
	stamped.SetLabels(map[string]string{"externalsecrets.external-secrets.io/cluster-external-secret": "stamped"})
	stamped.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "external-secrets.io/v1beta1", Kind: "ClusterExternalSecret",
		Name: "stamped", UID: ces.GetUID(), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}})
	spec, _, _ := unstructured.NestedMap(ces.Object, "spec", "externalSecretSpec")
	_ = unstructured.SetNestedMap(stamped.Object, spec, "spec")
	if _, err := dyn.Resource(gvr("externalsecrets", "v1beta1")).Namespace(upstreamCESNS).Create(ctx, stamped, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Each target Secret as upstream wrote it.
	for _, target := range []struct{ ns, name, key string }{
		{upstreamNS, "app-0", "app/0"}, {upstreamNS, "app-1", "app/1"}, {upstreamNS, "app-2", "app/2"},
		{upstreamNS, "from-cluster-store", "shared/key"}, {upstreamCESNS, "stamped", "shared/key"},
	} {
		owner, err := dyn.Resource(gvr("externalsecrets", "v1beta1")).Namespace(target.ns).Get(ctx, target.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		data := map[string][]byte{"value": []byte(values[target.key])}
		labels := map[string]string{
			"reconcile.external-secrets.io/managed":    "true",
			"reconcile.external-secrets.io/created-by": upstreamHash(target.ns + "/" + target.name),
		}
		for k, v := range owner.GetLabels() { // upstream copies the ExternalSecret's own
			labels[k] = v
		}
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Name: target.name, Namespace: target.ns,
				Labels:      labels,
				Annotations: map[string]string{"reconcile.external-secrets.io/data-hash": upstreamHash(data)},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "external-secrets.io/v1", Kind: "ExternalSecret",
					Name: target.name, UID: owner.GetUID(), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
			},
			Type: corev1.SecretTypeOpaque,
			Data: data,
		}
		if _, err := cluster.Client.CoreV1().Secrets(target.ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// waitReady waits for an object of eso's kinds (external-secrets.io/v1, or
// v1alpha1 for PushSecrets) to report Ready=True.
func waitReady(t *testing.T, ctx context.Context, resource, ns, name string) {
	t.Helper()
	version := "v1"
	if slices.Contains([]string{"pushsecrets", "clusterpushsecrets"}, resource) {
		version = "v1alpha1"
	}
	dyn := cluster.Dynamic
	client := dyn.Resource(schema.GroupVersionResource{Group: "external-secrets.io", Version: version, Resource: resource})
	eventually(t, time.Minute, resource+" "+ns+"/"+name+" Ready", func() error {
		var obj *unstructured.Unstructured
		var err error
		if ns == "" {
			obj, err = client.Get(ctx, name, metav1.GetOptions{})
		} else {
			obj, err = client.Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		}
		if err != nil {
			return err
		}
		if ok, why := readyCondition(obj); !ok {
			return fmt.Errorf("%s", why)
		}
		return nil
	})
}
