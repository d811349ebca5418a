package manager

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	ctrl "sigs.k8s.io/controller-runtime"
)

// crdWait bounds how long eso waits at start for the API server to serve
// its kinds.
const crdWait = time.Minute

// waitForKinds waits until the API server serves every kind of eso's
// groups (*.external-secrets.io) in scheme. An install applies eso's CRDs
// and its Deployment together: started before the CRDs are established,
// eso could not set up its watches and would exit and be restarted. A kind
// still missing after wait is an error that names it.
func waitForKinds(ctx context.Context, dc discovery.DiscoveryInterface, scheme *runtime.Scheme, timeout time.Duration) error {
	want := esoKinds(scheme)
	var missing []string
	var logged time.Time
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(context.Context) (bool, error) {
		var err error
		if missing, err = unserved(dc, want); err != nil || len(missing) == 0 {
			return err == nil, err
		}
		if time.Since(logged) > 10*time.Second {
			ctrl.Log.WithName("eso").Info("waiting for the API server to serve eso's kinds", "missing", missing)
			logged = time.Now()
		}
		return false, nil
	})
	if err != nil && len(missing) > 0 {
		return fmt.Errorf("the API server does not serve %s: are eso's CRDs installed?", strings.Join(missing, ", "))
	}
	return err
}

// esoKinds are the kinds of eso's groups in scheme, by group version:
// those with a list kind (the objects, not the option kinds every group
// version registers).
func esoKinds(scheme *runtime.Scheme) map[string][]string {
	types := scheme.AllKnownTypes()
	want := map[string][]string{}
	for gvk := range types {
		if !strings.HasSuffix(gvk.Group, "external-secrets.io") || strings.HasSuffix(gvk.Kind, "List") {
			continue
		}
		if _, ok := types[gvk.GroupVersion().WithKind(gvk.Kind+"List")]; ok {
			want[gvk.GroupVersion().String()] = append(want[gvk.GroupVersion().String()], gvk.Kind)
		}
	}
	return want
}

// unserved are the kinds of want the API server does not serve yet,
// sorted, as group-version/kind.
func unserved(dc discovery.DiscoveryInterface, want map[string][]string) ([]string, error) {
	var missing []string
	for gv, kinds := range want {
		served := map[string]bool{}
		list, err := dc.ServerResourcesForGroupVersion(gv)
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("discovering %s: %w", gv, err)
		}
		if list != nil {
			for _, r := range list.APIResources {
				served[r.Kind] = true
			}
		}
		for _, k := range kinds {
			if !served[k] {
				missing = append(missing, gv+"/"+k)
			}
		}
	}
	slices.Sort(missing)
	return missing, nil
}
