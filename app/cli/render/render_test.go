package render

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/cli/binary"
	"github.com/eso-dev/eso/app/manager"
	"github.com/eso-dev/eso/providers/fake"
	"github.com/eso-dev/eso/providers/plugin"
)

// render runs `eso render` with the files (name → content) written to a
// temporary directory; in args, @name stands for a file's path.
func render(t *testing.T, files map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for i, a := range args {
		if name, ok := strings.CutPrefix(a, "@"); ok {
			args[i] = filepath.Join(dir, name)
		}
	}
	var out, errOut bytes.Buffer
	code = Run(args, strings.NewReader(""), &out, &errOut, binary.Build{Plugins: []plugin.Registration{fake.Registration}})
	return code, out.String(), errOut.String()
}

// secretOf decodes the one Secret rendered.
func secretOf(t *testing.T, out string) *corev1.Secret {
	t.Helper()
	var s corev1.Secret
	if err := yaml.UnmarshalStrict([]byte(out), &s); err != nil {
		t.Fatalf("output is not one Secret: %v\n%s", err, out)
	}
	return &s
}

const dataFile = `
db:
  user: app
  password: s3cr3t
encoded: czNjcjN0
not-base64: "%%%"
`

func TestRenderTemplate(t *testing.T) {
	es := `
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata:
  name: app
  namespace: team
spec:
  secretStoreRef: {name: vault}
  target:
    name: app-config
    template:
      type: kubernetes.io/basic-auth
      metadata:
        labels: {app: web}
        annotations: {owner: payments}
      data:
        username: "{{ .user }}"
        password: "{{ .password }}"
        url: "postgres://{{ .user }}@db/app"
  data:
  - secretKey: user
    remoteRef: {key: db, property: user}
  - secretKey: password
    remoteRef: {key: db, property: password}
`
	code, out, errOut := render(t, map[string]string{"es.yaml": es, "data.yaml": dataFile}, "-f", "@es.yaml", "--data", "@data.yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	s := secretOf(t, out)
	if s.Namespace != "team" || s.Name != "app-config" || s.Type != corev1.SecretTypeBasicAuth {
		t.Errorf("Secret %s/%s of type %s", s.Namespace, s.Name, s.Type)
	}
	want := map[string]string{"username": "app", "password": "s3cr3t", "url": "postgres://app@db/app"}
	if len(s.Data) != len(want) {
		t.Errorf("data keys %v, want %v", s.Data, want)
	}
	for k, v := range want {
		if string(s.Data[k]) != v {
			t.Errorf("data[%s] = %q, want %q", k, s.Data[k], v)
		}
	}
	// The controller's own marks: the Secret is eso's, written by app.
	if s.Labels["app"] != "web" || s.Labels["reconcile.external-secrets.io/managed"] != "true" ||
		s.Annotations["owner"] != "payments" || s.Annotations["reconcile.external-secrets.io/managed-by"] != "app" ||
		s.Annotations["reconcile.external-secrets.io/data-hash"] == "" {
		t.Errorf("metadata: labels %v annotations %v", s.Labels, s.Annotations)
	}
	if len(s.OwnerReferences) != 1 || s.OwnerReferences[0].Kind != "ExternalSecret" || s.OwnerReferences[0].Name != "app" {
		t.Errorf("ownerReferences %v", s.OwnerReferences)
	}
	if strings.Contains(out, "creationTimestamp") || strings.Contains(out, "resourceVersion") {
		t.Errorf("output carries what the API server sets:\n%s", out)
	}

	// JSON, the same Secret.
	code, jsonOut, _ := render(t, map[string]string{"es.yaml": es, "data.yaml": dataFile}, "-f", "@es.yaml", "--data", "@data.yaml", "-o", "json")
	if code != 0 || !strings.HasPrefix(jsonOut, "{") || !strings.Contains(jsonOut, `"password": "`+base64.StdEncoding.EncodeToString([]byte("s3cr3t"))+`"`) {
		t.Errorf("-o json: exit %d\n%s", code, jsonOut)
	}
}

// TestRenderBudget: a template past the render budget fails as the sync
// would, with the Ready condition's reason and message, and exit code 1.
func TestRenderBudget(t *testing.T) {
	es := `
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: big}
spec:
  secretStoreRef: {name: vault}
  target:
    template:
      data:
        huge: '{{ repeat 4096 (repeat 4096 .password) }}'
  data:
  - secretKey: password
    remoteRef: {key: db, property: password}
`
	code, out, errOut := render(t, map[string]string{"es.yaml": es, "data.yaml": dataFile}, "-f", "@es.yaml", "--data", "@data.yaml")
	if code != 1 || out != "" {
		t.Fatalf("exit %d, stdout %q; want 1 and nothing printed", code, out)
	}
	want := "eso render: ExternalSecret default/big: SecretSyncedError: "
	if !strings.HasPrefix(errOut, want) || !strings.Contains(errOut, "render budget exceeded: data.huge: repeat would take the bytes produced past 8388608") {
		t.Errorf("stderr %q, want %q and the budget's message", errOut, want)
	}
	if strings.Contains(errOut, "s3cr3t") {
		t.Errorf("the message carries the value: %s", errOut)
	}
}

func TestRenderDecodingStrategy(t *testing.T) {
	es := `
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: app}
spec:
  secretStoreRef: {name: vault}
  data:
  - secretKey: password
    remoteRef: {key: encoded, decodingStrategy: Base64}
`
	code, out, errOut := render(t, map[string]string{"es.yaml": es, "data.yaml": dataFile}, "-f", "@es.yaml", "--data", "@data.yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if s := secretOf(t, out); string(s.Data["password"]) != "s3cr3t" || s.Name != "app" {
		t.Errorf("Secret %s data %q, want the value decoded", s.Name, s.Data)
	}

	bad := strings.Replace(es, "key: encoded", "key: not-base64", 1)
	code, out, errOut = render(t, map[string]string{"es.yaml": bad, "data.yaml": dataFile}, "-f", "@es.yaml", "--data", "@data.yaml")
	if code != 1 || out != "" || !strings.Contains(errOut, `SecretSyncedError: data[0]: unusable value: value of "password" is not valid base64 (decodingStrategy Base64)`) {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestRenderRewrite(t *testing.T) {
	es := `
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: app, labels: {team: payments}}
spec:
  secretStoreRef: {name: vault, kind: ClusterSecretStore}
  dataFrom:
  - extract: {key: db}
    rewrite:
    - regexp: {source: "^(.*)$", target: "DB_$1"}
    - transform: {template: "{{ .value | upper }}"}
`
	code, out, errOut := render(t, map[string]string{"es.yaml": es, "data.yaml": dataFile}, "-f", "@es.yaml", "--data", "@data.yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	s := secretOf(t, out)
	if len(s.Data) != 2 || string(s.Data["DB_USER"]) != "app" || string(s.Data["DB_PASSWORD"]) != "s3cr3t" {
		t.Errorf("data %q", s.Data)
	}
	// Without a template the Secret carries the ExternalSecret's labels.
	if s.Labels["team"] != "payments" {
		t.Errorf("labels %v", s.Labels)
	}
}

func TestRenderPushSecret(t *testing.T) {
	files := map[string]string{
		"push.yaml": `
apiVersion: v1
kind: Secret
metadata: {name: source}
stringData: {token: t0ken}
---
apiVersion: external-secrets.io/v1alpha1
kind: PushSecret
metadata: {name: push}
spec:
  secretStoreRefs:
  - name: vault
  - name: shared
    kind: ClusterSecretStore
  selector:
    secret: {name: source}
  data:
  - match:
      secretKey: token
      remoteRef: {remoteKey: app-token}
`,
		"data.yaml": dataFile,
	}
	code, out, errOut := render(t, files, "-f", "@push.yaml", "--data", "@data.yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var report pushReport
	if err := yaml.UnmarshalStrict([]byte(out), &report); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if report.PushSecret != "default/push" || len(report.Pushes) != 2 {
		t.Fatalf("report %+v", report)
	}
	stores := map[string]bool{}
	for _, p := range report.Pushes {
		stores[p.Store] = true
		if p.RemoteKey != "app-token" || p.Bytes != len("t0ken") || p.Value != "" {
			t.Errorf("push %+v, want app-token, 5 bytes, the value left out", p)
		}
	}
	if !stores["SecretStore vault"] || !stores["ClusterSecretStore shared"] {
		t.Errorf("stores %v", stores)
	}
	if strings.Contains(out, "t0ken") {
		t.Errorf("the value is printed without --show-values:\n%s", out)
	}

	code, out, _ = render(t, files, "-f", "@push.yaml", "--data", "@data.yaml", "--show-values")
	if code != 0 || !strings.Contains(out, "value: t0ken") {
		t.Errorf("--show-values: exit %d\n%s", code, out)
	}

	// A remote key the data file holds was not created by eso: refused, as
	// a real store refuses it.
	files["push.yaml"] = strings.Replace(files["push.yaml"], "remoteKey: app-token", "remoteKey: db", 1)
	code, out, errOut = render(t, files, "-f", "@push.yaml", "--data", "@data.yaml")
	if code != 1 || out != "" || !strings.Contains(errOut, "eso render: PushSecret default/push: NotOwned: ") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestRenderMerge: creationPolicy Merge writes into the Secret the files
// give, and without one says there is nothing to merge into.
func TestRenderMerge(t *testing.T) {
	es := `
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: app}
spec:
  secretStoreRef: {name: vault}
  target: {name: existing, creationPolicy: Merge}
  data:
  - secretKey: password
    remoteRef: {key: db, property: password}
`
	target := `
apiVersion: v1
kind: Secret
metadata: {name: existing}
stringData: {kept: "yes"}
`
	code, out, errOut := render(t, map[string]string{"es.yaml": es, "target.yaml": target, "data.yaml": dataFile},
		"-f", "@es.yaml", "-f", "@target.yaml", "--data", "@data.yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if s := secretOf(t, out); string(s.Data["kept"]) != "yes" || string(s.Data["password"]) != "s3cr3t" {
		t.Errorf("data %q", s.Data)
	}
	code, out, errOut = render(t, map[string]string{"es.yaml": es, "data.yaml": dataFile}, "-f", "@es.yaml", "--data", "@data.yaml")
	if code != 0 || out != "" || !strings.Contains(errOut, "SecretMissing: Secret existing does not exist") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestRenderUsage(t *testing.T) {
	es := "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata: {name: app}\nspec: {secretStoreRef: {name: s}}\n"
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"--data", "@data.yaml"}, 2, "-f names no manifest"},
		{[]string{"-f", "@es.yaml"}, 2, "give exactly one of --data and --from-cluster"},
		{[]string{"-f", "@es.yaml", "--data", "@data.yaml", "--from-cluster"}, 2, "give exactly one of --data and --from-cluster"},
		{[]string{"-f", "@es.yaml", "--data", "@data.yaml", "-o", "table"}, 2, `invalid -o "table"`},
		{[]string{"-f", "@cm.yaml", "--data", "@data.yaml"}, 1, "the files hold no ExternalSecret or PushSecret"},
		{[]string{"-f", "@data.yaml", "--data", "@data.yaml"}, 1, "Object 'Kind' is missing"},
		{[]string{"-f", "@es.yaml", "--data", "@missing.yaml"}, 1, "missing.yaml"},
		{[]string{"-f", "@push.yaml", "--from-cluster", "--kubeconfig", "@no-kubeconfig"}, 1, "a PushSecret renders only offline (--data): through the cluster's stores it would push"},
		{[]string{"-f", "@gen.yaml", "--data", "@data.yaml"}, 1, "dataFrom[0] names generator Password pw: eso render does not run generators"},
		{[]string{"--help"}, 0, ""},
	} {
		code, _, errOut := render(t, map[string]string{"es.yaml": es, "data.yaml": "k: v\n", "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
			"push.yaml": "apiVersion: external-secrets.io/v1alpha1\nkind: PushSecret\nmetadata: {name: p}\nspec: {secretStoreRefs: [{name: s}], selector: {secret: {name: x}}}\n",
			"gen.yaml":  "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata: {name: g}\nspec: {dataFrom: [{sourceRef: {generatorRef: {kind: Password, name: pw}}}]}\n"}, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.says) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errOut, tc.code, tc.says)
		}
	}
}

// TestManifestDefaults: an ExternalSecret read from a file has the
// defaults its CRD gives, as the controller sees it from the API server.
func TestManifestDefaults(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "es.yaml")
	es := `
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: app}
spec:
  secretStoreRef: {name: vault}
  target: {template: {data: {k: v}}}
  data:
  - secretKey: k
    remoteRef: {key: db}
`
	if err := os.WriteFile(path, []byte(es), 0o600); err != nil {
		t.Fatal(err)
	}
	index, err := plugin.NewIndex([]plugin.Registration{fake.Registration})
	if err != nil {
		t.Fatal(err)
	}
	scheme, err := manager.NewScheme(index, manager.SchemeAdders{})
	if err != nil {
		t.Fatal(err)
	}
	objs, err := readManifests(scheme, []string{dir}, nil)
	if err != nil || len(objs) != 1 {
		t.Fatalf("read %d objects: %v", len(objs), err)
	}
	got := objs[0].(*esv1.ExternalSecret)
	spec := got.Spec
	if spec.SecretStoreRef.Kind != "SecretStore" || spec.Target.CreationPolicy != esv1.CreatePolicyOwner ||
		spec.Target.DeletionPolicy != esv1.DeletionPolicyRetain || spec.RefreshInterval == nil || spec.RefreshInterval.Duration != time.Hour ||
		spec.Target.Template.EngineVersion != "v2" || spec.Target.Template.MergePolicy != "Replace" ||
		spec.Data[0].RemoteRef.DecodingStrategy != esv1.DecodingNone {
		t.Errorf("defaults not applied: %+v", spec)
	}
}
