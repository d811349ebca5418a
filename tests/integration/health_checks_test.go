package integration

// The health checks of the tools that read eso's conditions: Argo CD's Lua
// health checks (eso's own, shipped in the chart as a ConfigMap snippet for
// argocd-cm, and Argo CD's built-in ones for upstream's kinds) and kstatus
// (sigs.k8s.io/cli-utils, which Flux and kpt use), each run on objects eso
// drove into a state and read back from the API server.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	genv2 "github.com/eso-dev/eso/apis/generator/v2alpha1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/apis/upstreamv1/v1stores"
	"github.com/eso-dev/eso/tests/testenv"
)

// argoCDCovers are the kinds Argo CD has built-in health checks for
// (resource_customizations/external-secrets.io/ in its repository). As it
// documents them, each reads the Ready condition: True is Healthy, False is
// Degraded, anything else Progressing. The test stands in for them with the
// chart's own script, which reads Ready the same way, rather than carrying
// Argo CD's code.
var argoCDCovers = map[string]bool{
	"external-secrets.io/ExternalSecret":        true,
	"external-secrets.io/PushSecret":            true,
	"external-secrets.io/SecretStore":           true,
	"external-secrets.io/ClusterSecretStore":    true,
	"external-secrets.io/ClusterExternalSecret": true,
}

// The chart's checks: the kinds Argo CD has no check for, and
// ClusterExternalSecret, whose built-in check misreads Ready=False.
var chartHealthChecks = []string{
	"external-secrets.io/ClusterExternalSecret",
	"external-secrets.io/ClusterPushSecret",
	"generator.external-secrets.io/ClusterGenerator",
	"generator.external-secrets.io/Generator",
	"secretstore.external-secrets.io/ClusterSecretStore",
	"secretstore.external-secrets.io/SecretStore",
}

const argoKeyPrefix = "resource.customizations.health."

// argoHealth is what an Argo CD health check returns.
type argoHealth struct{ Status, Message string }

// argoStatuses are the health statuses Argo CD accepts from a script;
// anything else it shows as Unknown.
var argoStatuses = []string{"Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown"}

// renderArgoChecks renders the chart with the checks on and returns its
// ConfigMap's scripts by "group/Kind", as Argo CD reads argocd-cm's keys
// resource.customizations.health.<group>_<Kind>.
func renderArgoChecks(t *testing.T) (*corev1.ConfigMap, map[string]string) {
	t.Helper()
	cms := argoChecksConfigMaps(render(t, "eso", "eso-system", "argocd.healthChecks.enabled=true"))
	if len(cms) != 1 {
		t.Fatalf("with argocd.healthChecks.enabled the chart renders %d ConfigMaps eso-argocd-health-checks, want 1", len(cms))
	}
	cm := typed[corev1.ConfigMap](t, cms, "ConfigMap")
	scripts := map[string]string{}
	for key, script := range cm.Data {
		gk, ok := strings.CutPrefix(key, argoKeyPrefix)
		group, kind, found := strings.Cut(gk, "_")
		if !ok || !found {
			t.Fatalf("ConfigMap key %q is not %s<group>_<Kind>", key, argoKeyPrefix)
		}
		scripts[group+"/"+kind] = script
	}
	return cm, scripts
}

// argoChecksConfigMaps are the ConfigMaps of the checks among objs.
func argoChecksConfigMaps(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "ConfigMap" && o.GetName() == "eso-argocd-health-checks" {
			out = append(out, o)
		}
	}
	return out
}

// runHealthLua runs a health.lua on obj as Argo CD does (util/lua/lua.go):
// obj converted as Argo CD converts it, one second to finish, and, unless
// openLibs (Argo CD's built-in scripts, or useOpenLibs in argocd-cm), only
// Lua's base, package and table libraries: an argocd-cm customization has
// no string, math or os.
func runHealthLua(t *testing.T, script string, obj map[string]any, openLibs bool) argoHealth {
	t.Helper()
	l := lua.NewState(lua.Options{SkipOpenLibs: !openLibs})
	defer l.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", luaValue(l, obj))
	if err := l.DoString(script); err != nil {
		t.Fatalf("the health check failed: %v", err)
	}
	ret, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		t.Fatalf("the health check returned %s, not a table", l.Get(-1).Type())
	}
	h := argoHealth{Status: lua.LVAsString(ret.RawGetString("status")), Message: lua.LVAsString(ret.RawGetString("message"))}
	if !slices.Contains(argoStatuses, h.Status) {
		t.Fatalf("the health check returned status %q, which Argo CD does not know", h.Status)
	}
	return h
}

// luaValue converts a decoded object as Argo CD's decodeValue does.
func luaValue(l *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case bool:
		return lua.LBool(v)
	case float64:
		return lua.LNumber(v)
	case int64:
		return lua.LNumber(v)
	case int32:
		return lua.LNumber(v)
	case int:
		return lua.LNumber(v)
	case string:
		return lua.LString(v)
	case json.Number:
		return lua.LString(v)
	case []any:
		arr := l.CreateTable(len(v), 0)
		for _, item := range v {
			arr.Append(luaValue(l, item))
		}
		return arr
	case map[string]any:
		tbl := l.CreateTable(0, len(v))
		for k, item := range v {
			tbl.RawSetH(lua.LString(k), luaValue(l, item))
		}
		return tbl
	}
	return lua.LNil
}

// TestHealthChecksInTheChart: off by default; on, one ConfigMap whose keys
// are argocd-cm's, one for each kind of eso with a Ready condition that
// Argo CD has no check for (or misreads), each a script that runs without
// Lua's libraries; provider configuration kinds have no status at all, so
// no check (Argo CD shows no health for them and they count as healthy).
func TestHealthChecksInTheChart(t *testing.T) {
	if cms := argoChecksConfigMaps(render(t, "eso", "eso-system")); len(cms) != 0 {
		t.Errorf("the chart renders the Argo CD checks by default")
	}
	helm(t, "lint", coreChart, "--strict", "--set", "argocd.healthChecks.enabled=true")
	cm, scripts := renderArgoChecks(t)
	if got := slices.Sorted(maps.Keys(scripts)); !slices.Equal(got, chartHealthChecks) {
		t.Errorf("the chart has checks for %v, want %v", got, chartHealthChecks)
	}
	for gk, script := range scripts {
		// A bare object: what Argo CD sees before eso wrote any status.
		h := runHealthLua(t, script, map[string]any{"metadata": map[string]any{"name": "x", "generation": int64(1)}}, false)
		if h.Status != "Progressing" {
			t.Errorf("%s without status: %+v, want Progressing", gk, h)
		}
	}
	ns := env.Namespace(t, "health-chart", nil)
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetName(cm.Name)
	u.SetNamespace(ns)
	if err := unstructured.SetNestedStringMap(u.Object, cm.Data, "data"); err != nil {
		t.Fatal(err)
	}
	dryRun(t, []*unstructured.Unstructured{u})

	// Every kind of eso whose status has a Ready condition has a check, the
	// chart's or Argo CD's; GeneratorState (Verified and Cleanup, no Ready)
	// is the one other kind with conditions. The provider configuration
	// kinds have no status.
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinitionList"))
	if err := env.Client.List(context.Background(), list); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, item := range list.Items {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(item.Object, &crd); err != nil {
			t.Fatal(err)
		}
		group, kind := crd.Spec.Group, crd.Spec.Names.Kind
		if !strings.HasSuffix(group, "external-secrets.io") {
			continue
		}
		seen++
		gk := group + "/" + kind
		for _, v := range crd.Spec.Versions {
			st, hasStatus := v.Schema.OpenAPIV3Schema.Properties["status"]
			_, hasConditions := st.Properties["conditions"]
			switch {
			case strings.HasPrefix(group, "provider."):
				if hasStatus || v.Subresources != nil && v.Subresources.Status != nil {
					t.Errorf("%s %s has a status now: give it a health check", gk, v.Name)
				}
			case gk == "generator.external-secrets.io/GeneratorState":
			case hasConditions:
				_, ours := scripts[gk]
				if !ours && !argoCDCovers[gk] {
					t.Errorf("%s %s has conditions and no Argo CD health check", gk, v.Name)
				}
			}
		}
	}
	if seen < 20 {
		t.Fatalf("found only %d of eso's CRDs", seen)
	}
}

// waitReadyStatus waits until obj's Ready condition has status, whatever
// its reason, and returns that reason.
func waitReadyStatus(t *testing.T, obj client.Object, want metav1.ConditionStatus) string {
	t.Helper()
	var reason string
	eventually(t, fmt.Sprintf("%T %s Ready=%s", obj, obj.GetName(), want), func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		c := meta.FindStatusCondition(conditions(obj), "Ready")
		if c == nil || c.Status != want {
			return fmt.Errorf("Ready: %+v", c)
		}
		reason = c.Reason
		return nil
	})
	return reason
}

// gvkOf is obj's kind as the test client's scheme knows it.
func gvkOf(t *testing.T, obj client.Object) schema.GroupVersionKind {
	t.Helper()
	gvk, err := apiutil.GVKForObject(obj, env.Client.Scheme())
	if err != nil {
		t.Fatal(err)
	}
	return gvk
}

// readBack reads obj from the API server as the tools see it: unstructured.
func readBack(t *testing.T, obj client.Object) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvkOf(t, obj))
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), u); err != nil {
		t.Fatal(err)
	}
	return u
}

// TestHealthChecksOnWhatEsoWrites drives stores, generators,
// ExternalSecrets, ClusterExternalSecrets, PushSecrets and
// ClusterPushSecrets into Ready True, Ready False, Ready Unknown, stalled
// (Stalled True), never checked, and changed since checked; reads each
// back; and asserts what
// Argo CD (with the chart's snippet merged into argocd-cm, its built-in
// checks for the rest) and kstatus make of it.
func TestHealthChecksOnWhatEsoWrites(t *testing.T) {
	runEso(t, testConfig())
	ctx := context.Background()
	_, ours := renderArgoChecks(t)
	ns := env.Namespace(t, "health", nil)
	const otherClass = "elsewhere"

	// Stores.
	create(t, fakeConfig(ns, "fake", map[string]string{"k": "v"}),
		plainSecret(ns, "aws-creds", map[string]string{"id": "AKIDEXAMPLE", "secret": "example"}),
		&provv1.AWSSecretManager{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-creds"}, Spec: awsSpecFor("", "absent")},
		// Nothing listens on port 1: validation cannot finish.
		&provv1.AWSSecretManager{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "unreachable"}, Spec: awsSpecFor("http://127.0.0.1:1", "aws-creds")},
	)
	ready := secretStore(ns, "ready", storeSpec("Fake", "fake", ""))
	noConfig := secretStore(ns, "no-config", storeSpec("Fake", "absent", ""))
	noCreds := secretStore(ns, "no-creds", storeSpec("AWSSecretManager", "no-creds", ""))
	unreachable := secretStore(ns, "unreachable", storeSpec("AWSSecretManager", "unreachable", ""))
	unchecked := secretStore(ns, "unchecked", storeSpec("Fake", "fake", ""))
	unchecked.Spec.Controller = otherClass
	moved := secretStore(ns, "moved", storeSpec("Fake", "fake", ""))
	css := clusterStore("health-"+ns, ssv2.ClusterSecretStoreSpec{SecretStoreSpec: storeSpec("Fake", "fake", ns)})
	cssBroken := clusterStore("health-broken-"+ns, ssv2.ClusterSecretStoreSpec{SecretStoreSpec: storeSpec("Fake", "absent", ns)})
	create(t, ready, noConfig, noCreds, unreachable, unchecked, moved, css, cssBroken)
	cleanup(t, css, cssBroken)

	// Generators.
	create(t, passwordConfig(ns, "pw", 16))
	genSpec := func(name, namespace string) genv2.GeneratorSpec {
		return genv2.GeneratorSpec{ProviderConfig: genv2.ProviderConfig{ProviderRef: genv2.ProviderRef{Kind: "Password", Name: name, Namespace: namespace}}}
	}
	gen := &genv2.Generator{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pw"}, Spec: genSpec("pw", "")}
	genBroken := &genv2.Generator{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "absent"}, Spec: genSpec("absent", "")}
	genMoved := &genv2.Generator{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "moved"}, Spec: genSpec("pw", "")}
	cg := &genv2.ClusterGenerator{ObjectMeta: metav1.ObjectMeta{Name: "health-" + ns}, Spec: genv2.ClusterGeneratorSpec{GeneratorSpec: genSpec("pw", ns)}}
	create(t, gen, genBroken, genMoved, cg)
	cleanup(t, cg)

	// ExternalSecrets: synced, failing at the provider, stalled on a
	// template that does not parse, of a store of another class (never
	// checked), synced then moved to such a store, and synced then edited
	// where their refresh policy never syncs again (CreatedOnce,
	// refreshInterval 0).
	synced := externalSecret(ns, "synced", "SecretStore", "ready", map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")})
	failing := externalSecret(ns, "failing", "SecretStore", "ready", map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("absent", "")})
	stalled := externalSecret(ns, "stalled", "SecretStore", "ready", map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")})
	stalled.Spec.Target.Template = &esv1.ExternalSecretTemplate{Data: map[string]string{"k": "{{ .k "}}
	esUnchecked := externalSecret(ns, "unchecked", "SecretStore", "unchecked", map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")})
	esMoved := externalSecret(ns, "moved", "SecretStore", "ready", map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")})
	esOnce := externalSecret(ns, "once", "SecretStore", "ready", map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")})
	esOnce.Spec.RefreshPolicy = esv1.RefreshPolicyCreatedOnce
	esNever := externalSecret(ns, "never", "SecretStore", "ready", map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")})
	esNever.Spec.RefreshInterval = &metav1.Duration{}
	create(t, synced, failing, stalled, esUnchecked, esMoved, esOnce, esNever)

	// ClusterExternalSecrets and ClusterPushSecrets: one provisioned
	// everywhere, one refused where an object of its name is not its own.
	okNS := env.Namespace(t, "health-ok", map[string]string{"health-ok": ns})
	takenNS := env.Namespace(t, "health-taken", map[string]string{"health-taken": ns})
	create(t, externalSecret(takenNS, "from-ces", "ClusterSecretStore", css.Name, map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")}))
	cesFor := func(name, label string) *esv1.ClusterExternalSecret {
		return &esv1.ClusterExternalSecret{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: esv1.ClusterExternalSecretSpec{
			ExternalSecretName: "from-ces",
			NamespaceSelectors: []*metav1.LabelSelector{{MatchLabels: map[string]string{label: ns}}},
			ExternalSecretSpec: externalSecret("", "", "ClusterSecretStore", css.Name, map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")}).Spec,
		}}
	}
	cesOK, cesFailed := cesFor("health-ok-"+ns, "health-ok"), cesFor("health-taken-"+ns, "health-taken")
	for _, n := range []string{okNS, takenNS} {
		create(t, plainSecret(n, "source", map[string]string{"token": "t0ken"}))
	}
	// The PushSecret already in takenNS pushes to a store that does not exist.
	psFailing := pushSecret(takenNS, "from-cps", "source", []string{"absent"}, pushed("token", "other", ""))
	create(t, psFailing)
	cpsFor := func(name, label string) *esv1alpha1.ClusterPushSecret {
		spec := pushSecret("", "", "source", nil, pushed("token", "health/"+name, "")).Spec
		spec.SecretStoreRefs = []esv1alpha1.PushSecretStoreRef{{Name: css.Name, Kind: "ClusterSecretStore"}}
		return &esv1alpha1.ClusterPushSecret{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: esv1alpha1.ClusterPushSecretSpec{
			PushSecretName:     "from-cps",
			NamespaceSelectors: []*metav1.LabelSelector{{MatchLabels: map[string]string{label: ns}}},
			PushSecretSpec:     spec,
		}}
	}
	cpsOK, cpsFailed := cpsFor("health-ok-"+ns, "health-ok"), cpsFor("health-taken-"+ns, "health-taken")
	create(t, cesOK, cesFailed, cpsOK, cpsFailed)
	cleanup(t, cesOK, cesFailed, cpsOK, cpsFailed)

	// Upstream's v1 stores, as upstream's documentation writes them.
	applyYAML(t, ns, `
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: v1-ready}
spec:
  provider:
    fake: {data: [{key: k, value: v}]}
---
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: v1-broken}
spec:
  provider:
    vault:
      server: http://127.0.0.1:1
      auth: {ldap: {path: ldap, username: u, secretRef: {name: p, key: k}}}
`)
	v1Ready := &v1stores.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "v1-ready"}}
	v1Broken := &v1stores.SecretStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "v1-broken"}}

	// Wait for each state.
	waitReady(t, ready, metav1.ConditionTrue, ssv2.ReasonValid)
	waitReady(t, noConfig, metav1.ConditionFalse, ssv2.ReasonProviderRefNotFound)
	waitReady(t, noCreds, metav1.ConditionFalse, ssv2.ReasonInvalidProviderConfig)
	waitReadyWithin(t, time.Minute, unreachable, metav1.ConditionUnknown, ssv2.ReasonValidationFailed)
	waitReady(t, css, metav1.ConditionTrue, ssv2.ReasonValid)
	waitReady(t, cssBroken, metav1.ConditionFalse, ssv2.ReasonProviderRefNotFound)
	waitReady(t, gen, metav1.ConditionTrue, ssv2.ReasonValid)
	waitReady(t, genBroken, metav1.ConditionFalse, ssv2.ReasonProviderRefNotFound)
	waitReady(t, synced, metav1.ConditionTrue, esv1.ReasonSecretSynced)
	waitReady(t, failing, metav1.ConditionFalse, esv1.ReasonSecretNotFound)
	waitReady(t, stalled, metav1.ConditionFalse, esv1.ReasonTemplateError)
	waitReady(t, cg, metav1.ConditionTrue, ssv2.ReasonValid)
	waitReady(t, cesOK, metav1.ConditionTrue, esv1.ReasonProvisioned)
	waitReady(t, cesFailed, metav1.ConditionFalse, esv1.ReasonNamespacesFailed)
	waitReady(t, cpsOK, metav1.ConditionTrue, esv1.ReasonProvisioned)
	waitReady(t, cpsFailed, metav1.ConditionFalse, esv1.ReasonNamespacesFailed)
	psSynced := &esv1alpha1.PushSecret{ObjectMeta: metav1.ObjectMeta{Namespace: okNS, Name: "from-cps"}}
	waitReady(t, psSynced, metav1.ConditionTrue, esv1alpha1.ReasonSynced)
	t.Logf("PushSecret to a missing store: Ready False/%s", waitReadyStatus(t, psFailing, metav1.ConditionFalse))
	waitReady(t, v1Ready, metav1.ConditionTrue, ssv2.ReasonValid)
	waitReady(t, v1Broken, metav1.ConditionFalse, ssv2.ReasonInvalidProviderConfig)

	// Checked, then changed in a way this eso does not act on (handed to
	// another controller class): the status describes an older generation.
	for _, m := range []struct {
		obj   client.Object
		apply func()
	}{
		{moved, func() { moved.Spec.Controller = otherClass }},
		{genMoved, func() { genMoved.Spec.Controller = otherClass }},
		{esMoved, func() { esMoved.Spec.SecretStoreRef.Name = "unchecked" }},
	} {
		waitReadyStatus(t, m.obj, metav1.ConditionTrue)
		patch := client.MergeFrom(m.obj.DeepCopyObject().(client.Object))
		m.apply()
		if err := env.Client.Patch(ctx, m.obj, patch); err != nil {
			t.Fatal(err)
		}
		if m.obj.GetGeneration() < 2 {
			t.Fatalf("%s: generation %d after a spec change", m.obj.GetName(), m.obj.GetGeneration())
		}
	}
	// Give eso the chance to (wrongly) act on what is not its own.
	time.Sleep(time.Second)

	// Synced, then edited where nothing syncs again: eso acknowledges the
	// generation (a healthy ExternalSecret stays Current and Healthy).
	for _, es := range []*esv1.ExternalSecret{esOnce, esNever} {
		waitReady(t, es, metav1.ConditionTrue, esv1.ReasonSecretSynced)
		patch := client.MergeFrom(es.DeepCopy())
		es.Spec.Data = append(es.Spec.Data, esv1.ExternalSecretData{SecretKey: "k2", RemoteRef: ref("k", "")})
		if err := env.Client.Patch(ctx, es, patch); err != nil {
			t.Fatal(err)
		}
		eventually(t, fmt.Sprintf("ExternalSecret %s: generation 2 acknowledged", es.Name), func() error {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(es), es); err != nil {
				return err
			}
			if es.Generation != 2 || es.Status.ObservedGeneration != es.Generation {
				return fmt.Errorf("generation %d, status.observedGeneration %d", es.Generation, es.Status.ObservedGeneration)
			}
			return nil
		})
	}

	type want struct {
		argo, argoMsg string // Argo CD's health and a part of its message; "" when Argo CD has no check
		kstatus       status.Status
	}
	cases := []struct {
		name string
		obj  client.Object
		want want
	}{
		{"SecretStore Ready", ready, want{"Healthy", "Valid", status.CurrentStatus}},
		{"SecretStore configuration missing", noConfig, want{"Degraded", "ProviderRefNotFound", status.InProgressStatus}},
		{"SecretStore credentials Secret missing", noCreds, want{"Degraded", "InvalidProviderConfig", status.InProgressStatus}},
		{"SecretStore provider unreachable", unreachable, want{"Progressing", "ValidationFailed", status.InProgressStatus}},
		// kstatus reads a custom resource with no Ready condition and no
		// status.observedGeneration as Current.
		{"SecretStore never checked", unchecked, want{"Progressing", "Waiting for eso to reconcile the SecretStore", status.CurrentStatus}},
		{"SecretStore changed since checked", moved, want{"Progressing", "generation 2", status.InProgressStatus}},
		{"ClusterSecretStore Ready", css, want{"Healthy", "Valid", status.CurrentStatus}},
		{"ClusterSecretStore configuration missing", cssBroken, want{"Degraded", "ProviderRefNotFound", status.InProgressStatus}},
		{"Generator Ready", gen, want{"Healthy", "Valid", status.CurrentStatus}},
		{"Generator configuration missing", genBroken, want{"Degraded", "ProviderRefNotFound", status.InProgressStatus}},
		{"Generator changed since checked", genMoved, want{"Progressing", "generation 2", status.InProgressStatus}},
		{"ClusterGenerator Ready", cg, want{"Healthy", "Valid", status.CurrentStatus}},
		// Argo CD's built-in check: Ready True is Healthy, Ready False
		// Degraded with Ready's message, whether or not it stalled (it
		// reads only Ready). kstatus reads Ready=False as InProgress and
		// says Failed only for Stalled=True, which eso writes for a failure
		// only an edit of the ExternalSecret can end; a missing remote key
		// may yet appear, so it is no stall.
		{"ExternalSecret synced", synced, want{"Healthy", "", status.CurrentStatus}},
		{"ExternalSecret failing", failing, want{"Degraded", "absent", status.InProgressStatus}},
		{"ExternalSecret stalled", stalled, want{"Degraded", "template error", status.FailedStatus}},
		{"ExternalSecret never checked", esUnchecked, want{"Progressing", "Waiting for eso to reconcile the ExternalSecret", status.CurrentStatus}},
		// Its status.observedGeneration lags: kstatus waits, as for a
		// store; Argo CD reads Ready's observedGeneration the same way.
		{"ExternalSecret changed since checked", esMoved, want{"Progressing", "generation 2", status.InProgressStatus}},
		{"ExternalSecret created once, edited", esOnce, want{"Healthy", "", status.CurrentStatus}},
		{"ExternalSecret of refreshInterval 0, edited", esNever, want{"Healthy", "", status.CurrentStatus}},
		{"ClusterExternalSecret provisioned", cesOK, want{"Healthy", "Provisioned", status.CurrentStatus}},
		{"ClusterExternalSecret failing namespaces", cesFailed, want{"Degraded", "NamespacesFailed", status.InProgressStatus}},
		{"ClusterPushSecret provisioned", cpsOK, want{"Healthy", "Provisioned", status.CurrentStatus}},
		{"ClusterPushSecret failing namespaces", cpsFailed, want{"Degraded", "NamespacesFailed", status.InProgressStatus}},
		{"PushSecret synced", psSynced, want{"Healthy", "", status.CurrentStatus}},
		{"PushSecret failing", psFailing, want{"Degraded", "", status.InProgressStatus}},
		{"v1 SecretStore Ready", v1Ready, want{"Healthy", "", status.CurrentStatus}},
		{"v1 SecretStore invalid", v1Broken, want{"Degraded", "not supported", status.InProgressStatus}},
		// A provider configuration has no status: Argo CD has no check
		// (no health, which never degrades an application), kstatus says Current.
		{"Fake configuration", &provv1.Fake{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fake"}}, want{"", "", status.CurrentStatus}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := readBack(t, c.obj)
			gk := u.GroupVersionKind().Group + "/" + u.GetKind()
			// argocd-cm customizations come first, then the built-in checks.
			var h argoHealth
			if script, ok := ours[gk]; ok {
				h = runHealthLua(t, script, u.Object, false)
			} else if argoCDCovers[gk] {
				h = runHealthLua(t, readyConditionScript(t), u.Object, false)
			}
			if h.Status != c.want.argo || !strings.Contains(h.Message, c.want.argoMsg) {
				t.Errorf("Argo CD health %+v, want %s with %q", h, c.want.argo, c.want.argoMsg)
			}
			res, err := status.Compute(u)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != c.want.kstatus {
				t.Errorf("kstatus %s (%s), want %s", res.Status, res.Message, c.want.kstatus)
			}
			t.Logf("Argo CD: %s %q; kstatus: %s %q", h.Status, h.Message, res.Status, res.Message)
		})
	}

}

// readyConditionScript is the chart's health check script.
func readyConditionScript(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "charts", "eso", "files", "argocd", "ready-condition.lua"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// awsSpecFor is an AWS Secrets Manager configuration whose static
// credentials are in Secret creds.
func awsSpecFor(endpoint, creds string) provv1.AWSSpec {
	return provv1.AWSSpec{Region: "eu-central-1", Endpoint: endpoint, Auth: &provv1.AWSAuth{SecretRef: &provv1.AWSAuthSecretRef{
		AccessKeyID:     provv1.SecretKeySelector{Name: creds, Key: "id"},
		SecretAccessKey: provv1.SecretKeySelector{Name: creds, Key: "secret"},
	}}}
}

// cleanup deletes cluster-scoped objects when the test ends.
func cleanup(t *testing.T, objs ...client.Object) {
	t.Cleanup(func() {
		for _, o := range objs {
			_ = env.Client.Delete(context.Background(), o)
		}
	})
}
