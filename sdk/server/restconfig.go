package server

import (
	"errors"
	"fmt"
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// RESTConfig loads the API server connection of an eso process or a
// provider built with package sdk: kubeconfig when set, else $KUBECONFIG,
// in-cluster config or ~/.kube/config.
func RESTConfig(kubeconfig string) (*rest.Config, error) {
	var rc *rest.Config
	var err error
	switch {
	case kubeconfig != "":
		rc, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	case os.Getenv("KUBECONFIG") == "" && os.Getenv("KUBERNETES_SERVICE_HOST") != "":
		rc, err = rest.InClusterConfig()
	default:
		// $KUBECONFIG, else ~/.kube/config.
		rules := clientcmd.NewDefaultClientConfigLoadingRules()
		rc, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
		if clientcmd.IsEmptyConfig(err) {
			return nil, errNoKubeconfig
		}
	}
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	return rc, nil
}

// errNoKubeconfig: eso found no way to reach a cluster.
var errNoKubeconfig = errors.New("no Kubernetes configuration found: pass --kubeconfig, set $KUBECONFIG or write ~/.kube/config, or run eso in a pod")
