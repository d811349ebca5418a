package integration

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/cli/binary"
	esorender "github.com/eso-dev/eso/app/cli/render"
	"github.com/eso-dev/eso/app/wiring"
)

// TestRenderFromCluster: `eso render --from-cluster` reads through the
// cluster's real store (and a template's ConfigMap the files do not give
// from the cluster too), prints the Secret, and writes nothing there; a
// store the cluster does not have fails with the Ready condition's message.
func TestRenderFromCluster(t *testing.T) {
	ns := env.Namespace(t, "render", nil)
	applyYAML(t, ns, `
apiVersion: provider.secretstore.external-secrets.io/v2alpha1
kind: Fake
metadata: {name: fake}
spec:
  data:
  - {key: db, value: '{"user":"app","password":"from-the-cluster"}'}
---
apiVersion: secretstore.external-secrets.io/v2alpha1
kind: SecretStore
metadata: {name: store}
spec:
  providerConfig:
    providerRef: {kind: Fake, name: fake}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: tpl}
data:
  url: "postgres://{{ .user }}:{{ .password }}@db/app"
`)
	dir := t.TempDir()
	kubeconfig := writeKubeconfig(t, dir, env.Config)
	manifest := filepath.Join(dir, "es.yaml")
	es := `
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: app}
spec:
  secretStoreRef: {name: store}
  target:
    name: app-db
    template:
      templateFrom:
      - configMap:
          name: tpl
          items: [{key: url}]
  dataFrom:
  - extract: {key: db}
`
	if err := os.WriteFile(manifest, []byte(es), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := esorender.Run([]string{"-f", manifest, "--from-cluster", "--kubeconfig", kubeconfig, "-n", ns}, nil, &out, &errOut, binary.Build{Plugins: wiring.Plugins(), V1Layer: wiring.V1Layer()})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var s corev1.Secret
	if err := yaml.UnmarshalStrict(out.Bytes(), &s); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if s.Namespace != ns || s.Name != "app-db" || string(s.Data["url"]) != "postgres://app:from-the-cluster@db/app" || len(s.Data) != 1 {
		t.Errorf("Secret %s/%s data %q", s.Namespace, s.Name, s.Data)
	}
	ctx := context.Background()
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app-db"}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Secret was written to the cluster: %v", err)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app"}, &esv1.ExternalSecret{}); !apierrors.IsNotFound(err) {
		t.Errorf("the ExternalSecret was written to the cluster: %v", err)
	}

	if err := os.WriteFile(manifest, []byte(strings.Replace(es, "name: store", "name: absent", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errOut.Reset()
	code = esorender.Run([]string{"-f", manifest, "--from-cluster", "--kubeconfig", kubeconfig, "-n", ns}, nil, &out, &errOut, binary.Build{Plugins: wiring.Plugins(), V1Layer: wiring.V1Layer()})
	want := "eso render: ExternalSecret " + ns + "/app: SecretSyncedError: store not found: SecretStore " + ns + "/absent"
	if code != 1 || out.Len() != 0 || !strings.HasPrefix(errOut.String(), want) {
		t.Errorf("a missing store: exit %d, stdout %q, stderr %q; want 1 and %q", code, out.String(), errOut.String(), want)
	}

	// A v1 store of the same name is the one a storeRef without apiVersion
	// names, for eso and so for the render.
	applyYAML(t, ns, `
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: store}
spec:
  provider:
    fake:
      data:
      - {key: db, value: '{"user":"app","password":"from-the-v1-store"}'}
`)
	if err := os.WriteFile(manifest, []byte(es), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errOut.Reset()
	if code := esorender.Run([]string{"-f", manifest, "--from-cluster", "--kubeconfig", kubeconfig, "-n", ns}, nil, &out, &errOut, binary.Build{Plugins: wiring.Plugins(), V1Layer: wiring.V1Layer()}); code != 0 ||
		!strings.Contains(out.String(), base64.StdEncoding.EncodeToString([]byte("postgres://app:from-the-v1-store@db/app"))) {
		t.Errorf("beside a v1 store of the same name: exit %d, stdout %s, stderr %s", code, out.String(), errOut.String())
	}
}
