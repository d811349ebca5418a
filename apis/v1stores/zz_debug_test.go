package v1stores_test

import (
	"context"
	"os"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

func TestZZDebug(t *testing.T) {
	env := &envtest.Environment{CRDDirectoryPaths: []string{os.Getenv("CRD")}, ErrorIfCRDPathMissing: true}
	env.CRDInstallOptions.MaxTime = 5 * time.Second
	cfg, err := env.Start()
	if err != nil {
		t.Log(err)
	}
	defer env.Stop()
	if cfg == nil {
		return
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	for i := 0; i < 3; i++ {
		b, err := cs.RESTClient().Get().AbsPath("/apis/external-secrets.io/v1").DoRaw(context.Background())
		t.Logf("RESULT %v %.100s", err, b)
		time.Sleep(time.Second)
	}
}
