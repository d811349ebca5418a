// Command controlplane runs a local kube-apiserver + etcd (controller-runtime
// envtest, binaries from KUBEBUILDER_ASSETS) with eso's CRDs installed, writes
// an admin kubeconfig and serves until interrupted. make demo uses it; it is
// also handy for trying eso by hand.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

func main() {
	kubeconfig := flag.String("write-kubeconfig", "", "where to write the admin kubeconfig (required)")
	crds := flag.String("crds", "apis/crds", "directory of CRDs to install")
	flag.Parse()
	if *kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "controlplane: --write-kubeconfig is required")
		os.Exit(2)
	}
	if err := run(*kubeconfig, *crds); err != nil {
		fmt.Fprintln(os.Stderr, "controlplane:", err)
		os.Exit(1)
	}
}

func run(kubeconfig, crds string) error {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return fmt.Errorf("KUBEBUILDER_ASSETS must name a directory with kube-apiserver, etcd and kubectl (make envtest builds them)")
	}
	env := &envtest.Environment{CRDDirectoryPaths: []string{crds}, ErrorIfCRDPathMissing: true}
	if _, err := env.Start(); err != nil {
		return fmt.Errorf("starting control plane: %w", err)
	}
	defer env.Stop() //nolint:errcheck // best effort on the way out

	user, err := env.AddUser(envtest.User{Name: "demo-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("creating admin user: %w", err)
	}
	cfg, err := user.KubeConfig()
	if err != nil {
		return err
	}
	if err := os.WriteFile(kubeconfig+".tmp", cfg, 0o600); err != nil {
		return err
	}
	if err := os.Rename(kubeconfig+".tmp", kubeconfig); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "controlplane: kube-apiserver at %s, kubeconfig %s\n", env.Config.Host, kubeconfig)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "controlplane: stopping")
	return nil
}
