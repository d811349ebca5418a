package app

import (
	"os/exec"
	"strings"
	"testing"
)

// corePackages are eso's core: everything but the composition root (this
// package), which reaches the build-tagged wiring in providers/register.
var corePackages = []string{
	"github.com/eso-dev/eso/app/config",
	"github.com/eso-dev/eso/app/controllers/...",
	"github.com/eso-dev/eso/app/generation",
	"github.com/eso-dev/eso/app/grpcclient",
	"github.com/eso-dev/eso/app/grpcserver",
	"github.com/eso-dev/eso/app/grpcwire",
	"github.com/eso-dev/eso/app/provcerts",
	"github.com/eso-dev/eso/app/manager",
	"github.com/eso-dev/eso/app/refresh",
	"github.com/eso-dev/eso/app/registry",
	"github.com/eso-dev/eso/app/secrettemplate",
	"github.com/eso-dev/eso/app/metrics",
	"github.com/eso-dev/eso/app/stores",
	"github.com/eso-dev/eso/apis/...",
	"github.com/eso-dev/eso/providers",
	"github.com/eso-dev/eso/generators",
}

// sdkModules are the provider SDKs.
var sdkModules = []string{
	"github.com/aws/aws-sdk-go-v2",
	"cloud.google.com/go/",
	"google.golang.org/api/",
	"github.com/hashicorp/vault/",
}

// TestCorePackagesImportNoProviderSDK keeps controllers, stores, manager,
// registry and the API types free of provider packages and their SDKs.
func TestCorePackagesImportNoProviderSDK(t *testing.T) {
	args := append([]string{"list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}"}, corePackages...)
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if !strings.Contains(string(out), "github.com/eso-dev/eso/app/controllers/externalsecret") {
		t.Fatalf("go list did not reach the controllers: %v", deps)
	}
	for _, dep := range deps {
		if strings.HasPrefix(dep, "github.com/eso-dev/eso/providers/") {
			t.Errorf("core depends on provider package %s", dep)
		}
		for _, sdk := range sdkModules {
			if strings.HasPrefix(dep, sdk) {
				t.Errorf("core depends on provider SDK package %s", dep)
			}
		}
	}
}
