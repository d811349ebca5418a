package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/eso-dev/eso/app/config"
	"github.com/eso-dev/eso/providers/plugin"
	"github.com/eso-dev/eso/tests/testenv"
	"github.com/eso-dev/eso/tests/testeso"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

func testConfig() config.Config { return testeso.Config() }

// runEso runs eso as users install it: as the chart's ServiceAccount.
func runEso(t testing.TB, cfg config.Config, extra ...fx.Option) {
	testeso.Run(t, esoIdentity(t), cfg, extra...)
}

// withProviders builds the providers of the given kinds with the given
// constructors instead of the compiled-in ones: to reach test servers the
// configurations alone could not (plaintext, a proxy).
func withProviders(news map[string]func(plugin.Deps) plugin.Provider) fx.Option {
	return fx.Decorate(func(c *plugin.Index) (*plugin.Index, error) {
		regs := c.All()
		for i := range regs {
			if n, ok := news[regs[i].Kind]; ok && regs[i].Role() == plugin.RoleProvider {
				regs[i].NewProvider = n
			}
		}
		return plugin.NewIndex(regs)
	})
}

// The chart's install in these tests: its ServiceAccount and RBAC (with
// ServiceAccount tokens granted, which several stores use), installed
// once, and the client configuration that acts as that ServiceAccount. The
// API server authorizes with RBAC, so eso can do exactly what the chart
// grants, never what a cluster-admin could.
const chartNamespace, chartRelease = "eso-system", "eso"

var (
	chartOnce     sync.Once
	chartIdentity *rest.Config
	chartErr      error
)

func esoIdentity(t testing.TB) *rest.Config {
	t.Helper()
	chartOnce.Do(func() { chartIdentity, chartErr = installChartRBAC() })
	if chartErr != nil {
		t.Fatalf("installing the chart's ServiceAccount and RBAC: %v", chartErr)
	}
	return chartIdentity
}

func installChartRBAC() (*rest.Config, error) {
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: chartNamespace}}
	if err := env.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	objs, err := renderObjects(coreChart, chartRelease, chartNamespace, "crds.install=false", "serviceAccountTokens.enabled=true", "rolloutRestarts.enabled=true")
	if err != nil {
		return nil, err
	}
	serviceAccount := ""
	for _, obj := range objs {
		switch obj.GetKind() {
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
			if err := env.Client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
				return nil, fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
			}
			if obj.GetKind() == "ServiceAccount" {
				serviceAccount = obj.GetName()
			}
		}
	}
	if serviceAccount == "" {
		return nil, fmt.Errorf("the chart rendered no ServiceAccount")
	}
	return serviceAccountConfig(chartNamespace, serviceAccount), nil
}

// serviceAccountConfig is the test API server's config as ServiceAccount
// namespace/name, with the groups the API server gives one.
func serviceAccountConfig(namespace, name string) *rest.Config {
	rc := rest.CopyConfig(env.Config)
	rc.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + namespace + ":" + name,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
	}
	return rc
}
