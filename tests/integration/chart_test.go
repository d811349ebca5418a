package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	genv2 "github.com/eso-dev/eso/apis/generator/v2alpha1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/generation"
	"github.com/eso-dev/eso/tests/testenv"
	"github.com/eso-dev/eso/tests/testeso"
)

// helm runs the helm binary `make test` builds, and returns its output.
func helm(t *testing.T, args ...string) string {
	t.Helper()
	out, err := runHelm(args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func runHelm(args ...string) (string, error) {
	bin := os.Getenv("HELM_BIN")
	if bin == "" {
		return "", errors.New("HELM_BIN is not set: run the tests with `make test`, which builds helm")
	}
	home, err := os.MkdirTemp("", "helm-home-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(home)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home+"/cache", "HELM_CONFIG_HOME="+home+"/config", "HELM_DATA_HOME="+home+"/data")
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

var (
	coreChart     = filepath.Join(testenv.RepoRoot(), "charts", "eso")
	providerChart = filepath.Join(testenv.RepoRoot(), "charts", "eso-provider")
)

// render is `helm template` of the core chart as release name in
// namespace, parsed into objects.
func render(t *testing.T, release, namespace string, set ...string) []*unstructured.Unstructured {
	t.Helper()
	return renderChart(t, coreChart, release, namespace, set...)
}

// renderChart is `helm template` of chart as release in namespace, parsed.
func renderChart(t *testing.T, chart, release, namespace string, set ...string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := renderObjects(chart, release, namespace, set...)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func renderObjects(chart, release, namespace string, set ...string) ([]*unstructured.Unstructured, error) {
	args := []string{"template", release, chart, "--namespace", namespace}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	out, err := runHelm(args...)
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(out), 4096)
	var objs []*unstructured.Unstructured
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			return objs, nil
		} else if err != nil {
			return nil, fmt.Errorf("helm template output: %w", err)
		}
		if obj != nil {
			objs = append(objs, &unstructured.Unstructured{Object: obj})
		}
	}
}

func kinds(objs []*unstructured.Unstructured) map[string]int {
	out := map[string]int{}
	for _, o := range objs {
		out[o.GetKind()]++
	}
	return out
}

func typed[T any](t *testing.T, objs []*unstructured.Unstructured, kind string) *T {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind {
			var out T
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &out); err != nil {
				t.Fatal(err)
			}
			return &out
		}
	}
	t.Fatalf("no %s rendered", kind)
	return nil
}

// TestChartRendersWhatTheAPIServerAccepts lints the core chart and renders
// it with default and non-default values; the API server accepts every
// object (server-side dry-run), and the values do what they say.
func TestChartRendersWhatTheAPIServerAccepts(t *testing.T) {
	ns := env.Namespace(t, "chart", nil)
	valueSets := map[string][]string{
		"defaults": nil,
		"everything changed": {"replicas=2", "image.airgapped=true", "image.tag=v9.9.9", "crds.install=false",
			"metrics.secure=false", "metrics.serviceMonitor.enabled=true", "networkPolicy.enabled=true",
			"podDisruptionBudget.enabled=false", "controllerClass=edge", "log.level=debug", "extraArgs={--namespace=team-a}",
			"serviceAccount.annotations.eks\\.amazonaws\\.com/role-arn=arn:aws:iam::1:role/eso"},
	}
	for name, set := range valueSets {
		t.Run(name, func(t *testing.T) {
			lint := []string{"lint", coreChart, "--strict"}
			for _, s := range set {
				lint = append(lint, "--set", s)
			}
			helm(t, lint...)
			objs := render(t, "eso", ns, set...)
			t.Logf("%d objects rendered", len(objs))
			dryRun(t, objs)
			deploy := typed[appsv1.Deployment](t, objs, "Deployment")
			pod, c := deploy.Spec.Template.Spec, deploy.Spec.Template.Spec.Containers[0]
			if pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot || pod.SecurityContext.SeccompProfile.Type != "RuntimeDefault" ||
				!*c.SecurityContext.ReadOnlyRootFilesystem || *c.SecurityContext.AllowPrivilegeEscalation || c.Resources.Limits.Memory().IsZero() {
				t.Errorf("the pod is not locked down: %+v %+v", pod.SecurityContext, c.SecurityContext)
			}
			if c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.LivenessProbe.HTTPGet.Path != "/healthz" {
				t.Errorf("probes %+v %+v", c.ReadinessProbe, c.LivenessProbe)
			}
			got := kinds(objs)
			if name == "defaults" {
				crds, _ := filepath.Glob(filepath.Join(testenv.CRDDir(), "*.yaml"))
				if got["CustomResourceDefinition"] != len(crds) || got["PodDisruptionBudget"] != 1 || got["NetworkPolicy"] != 0 || got["ServiceMonitor"] != 0 {
					t.Errorf("default objects %v", got)
				}
				if args := strings.Join(c.Args, " "); !strings.Contains(args, "--metrics-secure") || strings.Contains(args, "--shards") || c.ImagePullPolicy != "IfNotPresent" {
					t.Errorf("defaults: args %v, pull policy %s", c.Args, c.ImagePullPolicy)
				}
				return
			}
			if got["CustomResourceDefinition"] != 0 || got["PodDisruptionBudget"] != 0 || got["NetworkPolicy"] != 1 || got["ServiceMonitor"] != 1 {
				t.Errorf("objects %v", got)
			}
			args := strings.Join(c.Args, " ")
			if c.ImagePullPolicy != "Never" || !strings.HasSuffix(c.Image, ":v9.9.9") || strings.Contains(args, "--metrics-secure") ||
				!strings.Contains(args, "--controller-class=edge") || !strings.Contains(args, "--namespace=team-a") || *deploy.Spec.Replicas != 2 {
				t.Errorf("values not applied: image %s (%s), args %v, replicas %d", c.Image, c.ImagePullPolicy, c.Args, *deploy.Spec.Replicas)
			}
		})
	}

	// Values the schema or the chart refuses, each with a message.
	for _, bad := range [][]string{{"bogus=1"}, {"log.level=verbose"}, {"replicas=2", "leaderElection.enabled=false"}} {
		args := []string{"template", "eso", coreChart}
		for _, s := range bad {
			args = append(args, "--set", s)
		}
		cmd := exec.Command(os.Getenv("HELM_BIN"), args...)
		cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir())
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Errorf("helm template accepted %v", bad)
		} else if !strings.Contains(string(out), "Error") {
			t.Errorf("helm template refused %v without a message: %s", bad, out)
		}
	}
}

// dryRun has the API server validate every object as a server-side apply
// without persisting it; kinds whose CRDs are not installed here (the
// Prometheus Operator's, cert-manager's) are skipped.
func dryRun(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, obj := range objs {
		if obj.GetKind() == "ServiceMonitor" || obj.GetKind() == "Certificate" {
			continue
		}
		if err := env.Client.Patch(context.Background(), obj.DeepCopy(), client.Apply, client.DryRunAll,
			client.FieldOwner("chart-test"), client.ForceOwnership); err != nil {
			t.Errorf("the API server refuses %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
}

// TestProviderChartRendersWhatTheAPIServerAccepts: the provider chart runs
// the image in provider mode with mTLS from the named Secret, serves the
// kinds asked for, asks cert-manager for a server-only certificate when
// told, and grants only reads and token requests.
func TestProviderChartRendersWhatTheAPIServerAccepts(t *testing.T) {
	ns := env.Namespace(t, "provider-chart", nil)
	for name, set := range map[string][]string{
		"defaults":     nil,
		"cert-manager": {"tls.certManager.enabled=true", "tls.certManager.issuerRef.name=eso-ca", "providerKinds={AWSSecretManager,Vault}", "image.airgapped=true", "replicas=3"},
		"sdk provider": {"image.repository=registry.example/provider-inmemory", "image.tag=v1",
			"rbac.extraRules[0].apiGroups={provider.secretstore.external-secrets.io}", "rbac.extraRules[0].resources={inmemories}",
			"rbac.extraRules[0].verbs={get}"},
	} {
		t.Run(name, func(t *testing.T) {
			lint := []string{"lint", providerChart, "--strict"}
			for _, s := range set {
				lint = append(lint, "--set", s)
			}
			helm(t, lint...)
			objs := renderChart(t, providerChart, "eso-aws", ns, set...)
			dryRun(t, objs)
			got := kinds(objs)
			if got["Deployment"] != 1 || got["Service"] != 1 || got["ServiceAccount"] != 1 || got["ClusterRole"] != 1 || got["CustomResourceDefinition"] != 0 {
				t.Errorf("objects %v", got)
			}
			c := typed[appsv1.Deployment](t, objs, "Deployment").Spec.Template.Spec.Containers[0]
			args := strings.Join(c.Args, " ")
			for _, want := range []string{"--mode=provider", "--tls-cert-file=/etc/eso/tls/tls.crt", "--tls-client-ca-file=/etc/eso/tls/ca.crt"} {
				if !strings.Contains(args, want) {
					t.Errorf("args %v lack %s", c.Args, want)
				}
			}
			if strings.Contains(args, "--insecure") || !*c.SecurityContext.ReadOnlyRootFilesystem {
				t.Errorf("args %v, security %+v", c.Args, c.SecurityContext)
			}
			role := typed[rbacv1.ClusterRole](t, objs, "ClusterRole")
			for _, rule := range role.Rules {
				for _, verb := range rule.Verbs {
					if verb != "get" && verb != "list" && !(verb == "create" && slices.Equal(rule.Resources, []string{"serviceaccounts/token"})) {
						t.Errorf("the provider process may %s %v", verb, rule.Resources)
					}
				}
			}
			switch name {
			case "defaults":
				return
			case "sdk provider":
				if c.Image != "registry.example/provider-inmemory:v1" || !slices.ContainsFunc(role.Rules, func(r rbacv1.PolicyRule) bool {
					return slices.Equal(r.Resources, []string{"inmemories"}) && slices.Equal(r.Verbs, []string{"get"})
				}) {
					t.Errorf("image %s, rules %v: the SDK provider's image or rule is missing", c.Image, role.Rules)
				}
				return
			}
			if !strings.Contains(args, "--provider-kinds=AWSSecretManager,Vault") || c.ImagePullPolicy != "Never" || got["Certificate"] != 1 {
				t.Errorf("values not applied: args %v, pull %s, objects %v", c.Args, c.ImagePullPolicy, got)
			}
			for _, o := range objs {
				if o.GetKind() == "Certificate" {
					usages, _, _ := unstructured.NestedStringSlice(o.Object, "spec", "usages")
					if slices.Contains(usages, "client auth") || !slices.Contains(usages, "server auth") {
						t.Errorf("certificate usages %v: want a server-only certificate", usages)
					}
				}
			}
		})
	}
}

// TestEsoRunsUnderTheChartsServiceAccount installs the chart's
// ServiceAccount and RBAC as rendered, then runs eso as that ServiceAccount
// (impersonated, on an API server with RBAC on): an ExternalSecret, a
// ClusterExternalSecret and a generated secret sync. The rules the chart
// grants are then exactly enough.
func TestEsoRunsUnderTheChartsServiceAccount(t *testing.T) {
	ctx := context.Background()
	system := env.Namespace(t, "eso-system", nil)
	release := "eso-" + system
	var applied []client.Object
	for _, obj := range render(t, release, system, "crds.install=false") {
		switch obj.GetKind() {
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
			if err := env.Client.Create(ctx, obj); err != nil {
				t.Fatalf("installing %s %s: %v", obj.GetKind(), obj.GetName(), err)
			}
			applied = append(applied, obj)
		}
	}
	t.Cleanup(func() {
		for _, obj := range applied {
			_ = env.Client.Delete(context.Background(), obj)
		}
	})
	var binding rbacv1.ClusterRoleBinding
	if err := env.Client.Get(ctx, client.ObjectKey{Name: release}, &binding); err != nil {
		t.Fatal(err)
	}
	sa := binding.Subjects[0]
	asServiceAccount := serviceAccountConfig(sa.Namespace, sa.Name)
	// The identity is the ServiceAccount's, not the test's: what the chart
	// does not grant is refused.
	restricted, err := client.New(asServiceAccount, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	if err := restricted.List(ctx, &rbacv1.ClusterRoleList{}); !apierrors.IsForbidden(err) {
		t.Fatalf("listing ClusterRoles as eso's ServiceAccount: %v, want Forbidden", err)
	}
	cfg := testConfig()
	cfg.SystemNamespace = system
	testeso.Run(t, asServiceAccount, cfg)

	team := env.Namespace(t, "chart-team", map[string]string{"chart-team": system})
	create(t,
		fakeConfig(team, "values", map[string]string{"k": "from-fake"}),
		secretStore(team, "fake", storeSpec("Fake", "values", "")),
		externalSecret(team, "plain", "SecretStore", "fake", map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")}),
		passwordConfig(team, "pw", 24),
		generatedSecret(team, "generated", esv1.GeneratorRef{APIVersion: generation.UpstreamAPIVersion, Kind: "Password", Name: "pw"}),
	)
	ces := &esv1.ClusterExternalSecret{ObjectMeta: metav1.ObjectMeta{Name: "chart-" + system}, Spec: esv1.ClusterExternalSecretSpec{
		ExternalSecretName: "from-ces",
		NamespaceSelectors: []*metav1.LabelSelector{{MatchLabels: map[string]string{"chart-team": system}}},
		ExternalSecretSpec: externalSecret("", "", "SecretStore", "fake", map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")}).Spec,
	}}
	create(t, ces)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), ces) })
	waitSecretData(t, team, "plain", map[string]string{"k": "from-fake"})
	waitSecretData(t, team, "from-ces", map[string]string{"k": "from-fake"})
	waitGenerated(t, team, "generated", "password", "")
}

// TestTenantRolesNeverWriteGeneratorStates binds a tenant to the chart's
// view and edit roles (what Kubernetes' edit role aggregates) in its
// namespace: it may manage its ExternalSecrets, stores and generators, and
// read GeneratorStates, but never create one.
func TestTenantRolesNeverWriteGeneratorStates(t *testing.T) {
	ctx := context.Background()
	system := env.Namespace(t, "eso-roles", nil)
	tenant := env.Namespace(t, "roles-tenant", nil)
	release := "eso-" + system
	for _, obj := range render(t, release, system, "crds.install=false") {
		if obj.GetKind() != "ClusterRole" || !strings.HasSuffix(obj.GetName(), "-view") && !strings.HasSuffix(obj.GetName(), "-edit") {
			continue
		}
		labels := obj.GetLabels()
		if labels["rbac.authorization.k8s.io/aggregate-to-edit"] != "true" {
			t.Errorf("%s does not aggregate to edit: %v", obj.GetName(), labels)
		}
		create(t, obj)
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
		create(t, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: obj.GetName()},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: obj.GetName()},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "tenant-dev"}}})
	}
	dev, err := client.New(env.UserConfig(t, "tenant-dev"), client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the tenant to manage its ExternalSecrets", func() error {
		return dev.Create(ctx, externalSecret(tenant, "app", "SecretStore", "fake", map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")}))
	})
	for _, obj := range []client.Object{secretStore(tenant, "fake", storeSpec("Fake", "values", "")), fakeConfig(tenant, "values", map[string]string{"k": "v"}),
		passwordConfig(tenant, "pw", 16)} {
		if err := dev.Create(ctx, obj); err != nil {
			t.Errorf("the tenant cannot create its %T: %v", obj, err)
		}
	}
	if err := dev.List(ctx, &genv2.GeneratorStateList{}, client.InNamespace(tenant)); err != nil {
		t.Errorf("the tenant cannot read its GeneratorStates: %v", err)
	}
	forged := &genv2.GeneratorState{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: "forged"}}
	if err := dev.Create(ctx, forged); !apierrors.IsForbidden(err) {
		t.Errorf("the tenant created a GeneratorState: %v, want Forbidden", err)
	}
}

// TestServiceAccountTokensOnlyWhereGranted: by default the chart grants no
// ServiceAccount tokens at all; with serviceAccountTokens.namespaces, eso
// running as the chart's ServiceAccount logs in as a tenant's ServiceAccount
// in those namespaces and is refused by the API server elsewhere.
func TestServiceAccountTokensOnlyWhereGranted(t *testing.T) {
	for _, obj := range render(t, "eso", "eso-system") {
		rules, _, _ := unstructured.NestedSlice(obj.Object, "rules")
		for _, r := range rules {
			resources, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "resources")
			if slices.Contains(resources, "serviceaccounts/token") {
				t.Errorf("by default %s %s grants ServiceAccount tokens", obj.GetKind(), obj.GetName())
			}
		}
	}

	ctx := context.Background()
	system := env.Namespace(t, "eso-tokens", nil)
	granted := env.Namespace(t, "tokens-granted", nil)
	denied := env.Namespace(t, "tokens-denied", nil)
	release := "eso-" + system
	for _, obj := range render(t, release, system, "crds.install=false", "serviceAccountTokens.enabled=true", "serviceAccountTokens.namespaces={"+granted+"}") {
		switch obj.GetKind() {
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
			if strings.HasSuffix(obj.GetName(), "-serviceaccount-tokens") && obj.GetKind() != "ClusterRole" &&
				(obj.GetKind() != "RoleBinding" || obj.GetNamespace() != granted) {
				t.Errorf("tokens granted by %s in %q, want only a RoleBinding in %s", obj.GetKind(), obj.GetNamespace(), granted)
			}
			create(t, obj)
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
		}
	}
	asServiceAccount := serviceAccountConfig(system, release)
	cfg := testConfig()
	cfg.SystemNamespace = system
	testeso.Run(t, asServiceAccount, cfg)

	for _, ns := range []string{granted, denied} {
		create(t,
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reader"}},
			&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "read-db"}, Rules: []rbacv1.PolicyRule{{
				APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}, ResourceNames: []string{"db"}}}},
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "read-db"},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "read-db"},
				Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "reader", Namespace: ns}}},
			plainSecret(ns, "db", map[string]string{"password": "pw"}),
			&provv1.Kubernetes{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "as-reader"}, Spec: provv1.KubernetesSpec{
				Auth: &provv1.KubernetesAuth{ServiceAccount: &provv1.KubernetesServiceAccount{Name: "reader"}}}},
			secretStore(ns, "as-reader", storeSpec("Kubernetes", "as-reader", "")),
			externalSecret(ns, "synced", "SecretStore", "as-reader", map[string]esv1.ExternalSecretDataRemoteRef{"password": ref("db", "password")}),
		)
	}
	waitSecretData(t, granted, "synced", map[string]string{"password": "pw"})
	eventually(t, "the ExternalSecret without tokens to say so", func() error {
		es := &esv1.ExternalSecret{ObjectMeta: metav1.ObjectMeta{Namespace: denied, Name: "synced"}}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(es), es); err != nil {
			return err
		}
		for _, c := range es.Status.Conditions {
			if c.Type == esv1.ConditionReady && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "forbidden") {
				return nil
			}
		}
		return fmt.Errorf("conditions %+v, want Ready=False naming the refusal", es.Status.Conditions)
	})
	if secretExists(t, denied, "synced") {
		t.Error("eso synced with a ServiceAccount token it was not granted")
	}
}

// TestNamespacesScope installs the chart's RBAC with scope: namespaces and
// runs eso as its ServiceAccount, watching those namespaces: ExternalSecrets
// there sync, while the ServiceAccount cannot read a Secret in any other
// namespace nor list Secrets cluster-wide.
func TestNamespacesScope(t *testing.T) {
	ctx := context.Background()
	system := env.Namespace(t, "eso-scoped", nil)
	a, b := env.Namespace(t, "scoped-a", nil), env.Namespace(t, "scoped-b", nil)
	outside := env.Namespace(t, "scoped-outside", nil)
	release := "eso-" + system
	for _, obj := range render(t, release, system, "crds.install=false", "scope=namespaces", "namespaces={"+a+","+b+"}") {
		switch obj.GetKind() {
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
			create(t, obj)
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
		case "Deployment":
			args, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
			if !strings.Contains(fmt.Sprint(args), "--namespace="+a+","+b) {
				t.Errorf("the Deployment does not watch only %s and %s: %v", a, b, args)
			}
		}
	}
	asServiceAccount := serviceAccountConfig(system, release)
	restricted, err := client.New(asServiceAccount, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	create(t, plainSecret(outside, "not-esos", map[string]string{"k": "v"}))
	if err := restricted.Get(ctx, client.ObjectKey{Namespace: outside, Name: "not-esos"}, &corev1.Secret{}); !apierrors.IsForbidden(err) {
		t.Errorf("reading a Secret outside the scope: %v, want Forbidden", err)
	}
	if err := restricted.List(ctx, &corev1.SecretList{}); !apierrors.IsForbidden(err) {
		t.Errorf("listing Secrets cluster-wide: %v, want Forbidden", err)
	}

	cfg := testConfig()
	cfg.SystemNamespace = system
	cfg.Namespace = a + "," + b
	testeso.Run(t, asServiceAccount, cfg)
	for _, ns := range []string{a, b} {
		create(t,
			fakeConfig(ns, "values", map[string]string{"k": "in-" + ns}),
			secretStore(ns, "fake", storeSpec("Fake", "values", "")),
			externalSecret(ns, "app", "SecretStore", "fake", map[string]esv1.ExternalSecretDataRemoteRef{"k": ref("k", "")}),
			passwordConfig(ns, "pw", 16),
			generatedSecret(ns, "generated", esv1.GeneratorRef{APIVersion: generation.UpstreamAPIVersion, Kind: "Password", Name: "pw"}),
		)
	}
	for _, ns := range []string{a, b} {
		waitSecretData(t, ns, "app", map[string]string{"k": "in-" + ns})
		waitGenerated(t, ns, "generated", "password", "")
	}

	// A ClusterSecretStore whose configuration is in a namespace eso does
	// not watch says so, and not as a transient failure; its Event, like
	// every cluster-scoped object's, is recorded in namespace default, the
	// only one the API server accepts it in.
	css := clusterStore(outside, ssv2.ClusterSecretStoreSpec{SecretStoreSpec: storeSpec("Fake", "values", outside)})
	create(t, fakeConfig(outside, "values", map[string]string{"k": "outside"}), css)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), css) })
	msg := waitReady(t, css, metav1.ConditionFalse, ssv2.ReasonInvalidProviderConfig)
	if want := "eso watches only namespace(s) " + a + ", " + b + " (--namespace) and the configuration Fake " + outside + "/values is in none of them"; !strings.Contains(msg, want) {
		t.Errorf("Ready message %q does not contain %q", msg, want)
	}
	eventually(t, "the ClusterSecretStore's Warning event in namespace default", func() error {
		var events corev1.EventList
		if err := env.Client.List(ctx, &events, client.InNamespace(metav1.NamespaceDefault)); err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Kind == "ClusterSecretStore" && e.InvolvedObject.Name == css.Name &&
				e.Type == corev1.EventTypeWarning && e.Reason == ssv2.ReasonInvalidProviderConfig {
				return nil
			}
		}
		return fmt.Errorf("none among %d events", len(events.Items))
	})
}

// TestChartValuesLintAgreesWithTemplate: for each chart, a table of values
// `helm lint --strict` and `helm template` both accept or both refuse.
// helm lint renders templates leniently (fail and required only warn), so
// whatever a template refuses the values schema must refuse too.
func TestChartValuesLintAgreesWithTemplate(t *testing.T) {
	cases := []struct {
		chart string
		set   []string
		ok    bool
	}{
		{coreChart, nil, true},
		{coreChart, []string{"log.format=text"}, true},
		{coreChart, []string{"log.format=console"}, true},
		{coreChart, []string{"log.format=xml"}, false},
		{coreChart, []string{"log.level=verbose"}, false},
		{coreChart, []string{"bogus=1"}, false},
		{coreChart, []string{"replicas=2"}, true},
		{coreChart, []string{"replicas=2", "leaderElection.enabled=false"}, false},
		{coreChart, []string{"replicas=1", "leaderElection.enabled=false"}, true},
		{coreChart, []string{"sharding.enabled=true"}, true},
		{coreChart, []string{"sharding.enabled=true", "replicas=3"}, true},
		{coreChart, []string{"sharding.enabled=true", "leaderElection.enabled=false"}, false},
		{coreChart, []string{"sharding.enabled=false", "leaderElection.enabled=false"}, true},
		{coreChart, []string{"scope=namespaces"}, false},
		{coreChart, []string{"scope=namespaces", "namespaces={team-a}"}, true},
		{coreChart, []string{"scope=namespaces", "namespaces={Team_A}"}, false},
		{coreChart, []string{"providerCertificates.namespace=eso-system"}, false},
		{coreChart, []string{"providerCertificates.namespace=eso-system", "providerCertificates.dnsNames={}"}, false},
		{coreChart, []string{"providerCertificates.namespace=eso-system", "providerCertificates.dnsNames={eso-aws.eso-system.svc}"}, true},
		{coreChart, []string{"serviceAccount.create=false"}, false},
		{coreChart, []string{"serviceAccount.create=false", "serviceAccount.name=existing"}, true},
		{coreChart, []string{"metrics.port=0"}, false},
		{providerChart, nil, true},
		{providerChart, []string{"log.format=text"}, true},
		{providerChart, []string{"log.format=xml"}, false},
		{providerChart, []string{"tls.certManager.enabled=true"}, false},
		{providerChart, []string{"tls.certManager.enabled=true", "tls.certManager.issuerRef.name=eso-ca"}, true},
		{providerChart, []string{"serviceAccount.create=false"}, false},
		{providerChart, []string{"serviceAccount.create=false", "serviceAccount.name=existing"}, true},
		{providerChart, []string{"scope=namespaces"}, false},
		{providerChart, []string{"scope=namespaces", "namespaces={team-a,team-b}"}, true},
		{providerChart, []string{"scope=everywhere"}, false},
		{providerChart, []string{"rbac.extraRules[0].apiGroups={x}", "rbac.extraRules[0].resources={y}", "rbac.extraRules[0].verbs={delete}"}, false},
	}
	for _, c := range cases {
		name := filepath.Base(c.chart) + " " + strings.Join(c.set, " ")
		t.Run(name, func(t *testing.T) {
			lint, template := []string{"lint", c.chart, "--strict"}, []string{"template", "eso", c.chart}
			for _, s := range c.set {
				lint, template = append(lint, "--set", s), append(template, "--set", s)
			}
			_, lintErr := runHelm(lint...)
			_, templateErr := runHelm(template...)
			if (lintErr == nil) != c.ok || (templateErr == nil) != c.ok {
				t.Errorf("want accepted=%v; helm lint: %v; helm template: %v", c.ok, lintErr, templateErr)
			}
		})
	}
}

// TestPackagedChartsInstallTheImageMakeImageWrites: `make charts` sets
// each chart's appVersion to the tag `make image` writes, so the packaged
// charts render that image without image.tag.
func TestPackagedChartsInstallTheImageMakeImageWrites(t *testing.T) {
	dist := t.TempDir()
	for _, build := range []struct{ tags, tag string }{{"", "v0.0.0-charts"}, {"aws,vault", "v0.0.0-charts-aws-vault"}} {
		cmd := exec.Command("make", "--no-print-directory", "charts", "DIST="+filepath.Join(dist, build.tag), "VERSION=v0.0.0-charts",
			"TAGS="+build.tags, "HELM="+os.Getenv("HELM_BIN"))
		cmd.Dir = testenv.RepoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("make charts: %v\n%s", err, out)
		}
		for _, chart := range []string{"eso", "eso-provider"} {
			packaged, err := filepath.Glob(filepath.Join(dist, build.tag, "charts", chart+"-[0-9]*.tgz"))
			if err != nil || len(packaged) != 1 {
				t.Fatalf("make charts wrote %v for %s", packaged, chart)
			}
			deploy := typed[appsv1.Deployment](t, renderChart(t, packaged[0], "eso", "eso-system"), "Deployment")
			if image := deploy.Spec.Template.Spec.Containers[0].Image; image != "ghcr.io/eso-dev/eso:"+build.tag {
				t.Errorf("%s packaged with TAGS=%q renders image %s, want the tag make image writes, %s", chart, build.tags, image, build.tag)
			}
		}
	}
}

// TestProviderChartNamespacesScope installs the provider chart's RBAC with
// scope: namespaces and acts as its ServiceAccount: it reads Secrets and
// requests tokens in the listed namespaces only, and lists no Secrets
// cluster-wide.
func TestProviderChartNamespacesScope(t *testing.T) {
	ctx := context.Background()
	system := env.Namespace(t, "provider-scoped", nil)
	a, b := env.Namespace(t, "provider-scoped-a", nil), env.Namespace(t, "provider-scoped-b", nil)
	outside := env.Namespace(t, "provider-scoped-outside", nil)
	release := "eso-aws"
	objs := renderChart(t, providerChart, release, system, "scope=namespaces", "namespaces={"+a+","+b+"}")
	got := kinds(objs)
	if got["ClusterRoleBinding"] != 0 || got["RoleBinding"] != 2 {
		t.Errorf("objects %v, want two RoleBindings and no ClusterRoleBinding", got)
	}
	var account string
	for _, obj := range objs {
		switch obj.GetKind() {
		case "ServiceAccount", "ClusterRole", "RoleBinding":
			if obj.GetKind() == "ServiceAccount" {
				account = obj.GetName()
			}
			if obj.GetKind() == "RoleBinding" && obj.GetNamespace() != a && obj.GetNamespace() != b {
				t.Errorf("a RoleBinding in %q", obj.GetNamespace())
			}
			if obj.GetNamespace() == "" && obj.GetKind() == "ServiceAccount" {
				obj.SetNamespace(system)
			}
			create(t, obj)
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
		}
	}
	asProvider := serviceAccountConfig(system, account)
	provider, err := client.New(asProvider, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{a, b, outside} {
		create(t, plainSecret(ns, "creds", map[string]string{"k": "v"}), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant"}})
	}
	for _, ns := range []string{a, b} {
		eventually(t, "the provider to read a Secret in "+ns, func() error {
			return provider.Get(ctx, client.ObjectKey{Namespace: ns, Name: "creds"}, &corev1.Secret{})
		})
	}
	if err := provider.Get(ctx, client.ObjectKey{Namespace: outside, Name: "creds"}, &corev1.Secret{}); !apierrors.IsForbidden(err) {
		t.Errorf("reading a Secret outside the scope: %v, want Forbidden", err)
	}
	if err := provider.List(ctx, &corev1.SecretList{}); !apierrors.IsForbidden(err) {
		t.Errorf("listing Secrets cluster-wide: %v, want Forbidden", err)
	}
	token := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{Audiences: []string{"vault"}}}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: outside, Name: "tenant"}}
	if err := provider.SubResource("token").Create(ctx, sa, token); !apierrors.IsForbidden(err) {
		t.Errorf("a token outside the scope: %v, want Forbidden", err)
	}
	sa.Namespace = a
	if err := provider.SubResource("token").Create(ctx, sa, token); err != nil {
		t.Errorf("a token in %s: %v", a, err)
	}
}

// TestRolloutRestartsOnlyWhenEnabled: the chart grants rules on workloads
// only with rolloutRestarts.enabled, and passes the flag then; with scope
// namespaces, only by RoleBindings in those namespaces.
func TestRolloutRestartsOnlyWhenEnabled(t *testing.T) {
	workloadRules := func(objs []*unstructured.Unstructured) (roles []string) {
		for _, o := range objs {
			if o.GetKind() != "ClusterRole" && o.GetKind() != "Role" {
				continue
			}
			rules, _, _ := unstructured.NestedSlice(o.Object, "rules")
			for _, r := range rules {
				groups, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "apiGroups")
				if slices.Contains(groups, "apps") {
					roles = append(roles, o.GetName())
				}
			}
		}
		return roles
	}
	bindings := func(objs []*unstructured.Unstructured, role string) (where []string) {
		for _, o := range objs {
			if name, _, _ := unstructured.NestedString(o.Object, "roleRef", "name"); name == role {
				where = append(where, o.GetKind()+" "+o.GetNamespace())
			}
		}
		slices.Sort(where)
		return where
	}
	flagged := func(objs []*unstructured.Unstructured) bool {
		return slices.Contains(typed[appsv1.Deployment](t, objs, "Deployment").Spec.Template.Spec.Containers[0].Args, "--rollout-restarts")
	}
	off := render(t, "eso", "eso-system")
	if roles := workloadRules(off); len(roles) != 0 || flagged(off) {
		t.Errorf("disabled: rules on workloads in %v, flag %v", roles, flagged(off))
	}
	on := render(t, "eso", "eso-system", "rolloutRestarts.enabled=true")
	if roles := workloadRules(on); !slices.Equal(roles, []string{"eso-rollout-restarts"}) || !flagged(on) {
		t.Errorf("enabled: rules on workloads in %v, flag %v", roles, flagged(on))
	}
	if got := bindings(on, "eso-rollout-restarts"); !slices.Equal(got, []string{"ClusterRoleBinding "}) {
		t.Errorf("enabled, scope cluster: bound by %v", got)
	}
	scoped := render(t, "eso", "eso-system", "rolloutRestarts.enabled=true", "scope=namespaces", "namespaces={a,b}")
	if got := bindings(scoped, "eso-rollout-restarts"); !slices.Equal(got, []string{"RoleBinding a", "RoleBinding b"}) {
		t.Errorf("enabled, scope namespaces a and b: bound by %v", got)
	}
}
