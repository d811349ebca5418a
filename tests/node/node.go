// Package node runs a real single-node Kubernetes cluster on this machine
// for the end-to-end tests: etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, containerd, kubelet and kube-proxy, built from Go modules
// and Debian packages, with no network beyond the machine. Pods get
// addresses in 198.18.0.0/15 on a bridge attached to no interface.
//
// It must run as root. Start cleans up what an earlier cluster of this
// package left behind (processes, mounts, network), and Stop removes
// everything the cluster made, so a failed run does not poison the next.
package node

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// NodeName is the cluster's one node.
const NodeName = "eso-node"

// Options say where the binaries are.
type Options struct {
	// ControlPlaneBin holds etcd, kube-apiserver and kubectl (make envtest).
	ControlPlaneBin string
	// NodeBin holds kubelet, kube-proxy, kube-controller-manager,
	// kube-scheduler and coredns (make node).
	NodeBin string
	// Logf reports progress; nil for silence.
	Logf func(format string, args ...any)
}

// Cluster is a running single-node cluster.
type Cluster struct {
	opts Options
	dir  string
	// LogDir keeps every component's log after Stop.
	LogDir string
	// Kubeconfig is an administrator's kubeconfig (system:masters).
	Kubeconfig string
	// Config is the administrator's client configuration.
	Config *rest.Config
	// Client is a clientset for Config.
	Client kubernetes.Interface
	// Dynamic is a dynamic client for Config, for kinds Client lacks.
	Dynamic dynamic.Interface

	pki   *pki
	net   *network
	ports struct {
		etcd, etcdPeer, apiserver, kubelet, kubeletHealthz, proxyHealthz, proxyMetrics int
	}
	procs map[string]*process
}

// Start brings a cluster up and waits until its node is Ready and Pods can
// be admitted. On error, everything started so far is stopped.
func Start(ctx context.Context, opts Options) (_ *Cluster, err error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("a node needs root: containerd, kubelet and the bridge do")
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if err := cleanLeftovers(); err != nil {
		return nil, fmt.Errorf("cleaning up an earlier cluster: %w", err)
	}
	c := &Cluster{opts: opts, procs: map[string]*process{}}
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w (component logs: %s)", err, c.LogDir)
			_ = c.Stop()
		}
	}()
	if c.dir, err = os.MkdirTemp("/var/tmp", "eso-node-"); err != nil {
		return nil, err
	}
	if c.LogDir, err = os.MkdirTemp("", "eso-node-logs-"); err != nil {
		return nil, err
	}
	if c.net, err = setUpNetwork(); err != nil {
		return nil, fmt.Errorf("network: %w", err)
	}
	for _, p := range []struct {
		host string
		port *int
	}{
		{"127.0.0.1", &c.ports.etcd}, {"127.0.0.1", &c.ports.etcdPeer}, {NodeIP, &c.ports.apiserver},
		{NodeIP, &c.ports.kubelet}, {"127.0.0.1", &c.ports.kubeletHealthz},
		{"127.0.0.1", &c.ports.proxyHealthz}, {"127.0.0.1", &c.ports.proxyMetrics},
	} {
		if *p.port, err = freePort(p.host); err != nil {
			return nil, err
		}
	}
	if err := c.writePKI(); err != nil {
		return nil, fmt.Errorf("certificates: %w", err)
	}
	if err := c.writeConfigs(); err != nil {
		return nil, err
	}

	opts.Logf("node: starting etcd and kube-apiserver")
	if err := c.startControlPlane(ctx); err != nil {
		return nil, err
	}
	opts.Logf("node: starting containerd")
	if err := c.StartContainerd(ctx); err != nil {
		return nil, err
	}
	if err := c.importPause(ctx); err != nil {
		return nil, err
	}
	opts.Logf("node: starting kubelet and kube-proxy")
	if err := c.StartKubelet(); err != nil {
		return nil, err
	}
	if err := c.startProcess("kube-proxy", filepath.Join(opts.NodeBin, "kube-proxy"), "--config", c.path("kube-proxy.yaml")); err != nil {
		return nil, err
	}
	if err := c.waitNodeReady(ctx); err != nil {
		return nil, err
	}
	opts.Logf("node: %s is Ready; starting the cluster DNS", NodeName)
	if err := c.startDNS(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Cluster) path(name string) string { return filepath.Join(c.dir, name) }

func (c *Cluster) apiserverURL() string {
	return "https://" + net.JoinHostPort(NodeIP, strconv.Itoa(c.ports.apiserver))
}

func (c *Cluster) writePKI() error {
	var err error
	if c.pki, err = newPKI(c.path("pki")); err != nil {
		return err
	}
	certs := []struct {
		name, cn string
		orgs     []string
		hosts    []string
	}{
		{"apiserver", "kube-apiserver", nil, []string{NodeIP, APIServiceIP, "127.0.0.1", "localhost",
			"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}},
		{"admin", "eso-node-admin", []string{"system:masters"}, nil},
		{"apiserver-kubelet-client", "kube-apiserver-kubelet-client", []string{"system:masters"}, nil},
		{"kube-controller-manager", "system:kube-controller-manager", nil, nil},
		{"kube-scheduler", "system:kube-scheduler", nil, nil},
		{"kube-proxy", "system:kube-proxy", nil, nil},
		{"kubelet", "system:node:" + NodeName, []string{"system:nodes"}, nil},
	}
	for _, cert := range certs {
		if err := c.pki.issue(cert.name, cert.cn, cert.orgs, cert.hosts...); err != nil {
			return err
		}
	}
	if err := c.pki.serviceAccountKey(); err != nil {
		return err
	}
	for _, user := range []string{"admin", "kube-controller-manager", "kube-scheduler", "kube-proxy", "kubelet"} {
		if err := c.pki.kubeconfig(c.path(user+".kubeconfig"), c.apiserverURL(), user); err != nil {
			return err
		}
	}
	c.Kubeconfig = c.path("admin.kubeconfig")
	return nil
}

func (c *Cluster) startControlPlane(ctx context.Context) error {
	cp := c.opts.ControlPlaneBin
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(c.ports.etcd)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(c.ports.etcdPeer)
	if err := c.startProcess("etcd", filepath.Join(cp, "etcd"),
		"--data-dir", c.path("etcd"), "--name", "eso-node",
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "eso-node="+peerURL, "--unsafe-no-fsync"); err != nil {
		return err
	}
	if err := c.waitFor(ctx, "etcd", 30*time.Second, func() error {
		resp, err := http.Get(etcdURL + "/health")
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}); err != nil {
		return err
	}
	pki := c.pki.dir
	if err := c.startProcess("kube-apiserver", filepath.Join(cp, "kube-apiserver"),
		"--etcd-servers", etcdURL,
		"--bind-address", NodeIP, "--advertise-address", NodeIP, "--secure-port", strconv.Itoa(c.ports.apiserver),
		"--service-cluster-ip-range", ServiceCIDR,
		"--tls-cert-file", filepath.Join(pki, "apiserver.crt"), "--tls-private-key-file", filepath.Join(pki, "apiserver.key"),
		"--client-ca-file", c.pki.caFile(),
		"--kubelet-client-certificate", filepath.Join(pki, "apiserver-kubelet-client.crt"),
		"--kubelet-client-key", filepath.Join(pki, "apiserver-kubelet-client.key"),
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", filepath.Join(pki, "sa.pub"),
		"--service-account-signing-key-file", filepath.Join(pki, "sa.key"),
		"--authorization-mode", "Node,RBAC",
		"--allow-privileged=true"); err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return err
	}
	c.Config = cfg
	if c.Client, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	if c.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return err
	}
	if err := c.waitFor(ctx, "kube-apiserver", 60*time.Second, func() error {
		_, err := c.Client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err
	}); err != nil {
		return err
	}
	if err := c.startProcess("kube-controller-manager", filepath.Join(c.opts.NodeBin, "kube-controller-manager"),
		"--kubeconfig", c.path("kube-controller-manager.kubeconfig"),
		"--authentication-kubeconfig", c.path("kube-controller-manager.kubeconfig"),
		"--authorization-kubeconfig", c.path("kube-controller-manager.kubeconfig"),
		"--service-account-private-key-file", filepath.Join(pki, "sa.key"),
		"--root-ca-file", c.pki.caFile(),
		"--use-service-account-credentials",
		"--leader-elect=false", "--bind-address", "127.0.0.1", "--secure-port", "0",
		"--controllers", "*,-nodeipam,-cloud-node-lifecycle,-service-lb-controller,-node-route-controller"); err != nil {
		return err
	}
	return c.startProcess("kube-scheduler", filepath.Join(c.opts.NodeBin, "kube-scheduler"),
		"--kubeconfig", c.path("kube-scheduler.kubeconfig"),
		"--authentication-kubeconfig", c.path("kube-scheduler.kubeconfig"),
		"--authorization-kubeconfig", c.path("kube-scheduler.kubeconfig"),
		"--leader-elect=false", "--bind-address", "127.0.0.1", "--secure-port", "0")
}

// StartContainerd starts containerd and waits until it answers.
func (c *Cluster) StartContainerd(ctx context.Context) error {
	if err := os.MkdirAll(filepath.Dir(ContainerdSocket), 0o755); err != nil {
		return err
	}
	if err := c.startProcess("containerd", "containerd", "--config", c.path("containerd.toml")); err != nil {
		return err
	}
	return c.waitFor(ctx, "containerd", 30*time.Second, func() error {
		_, err := c.Ctr(ctx, "version")
		return err
	})
}

// StopContainerd stops containerd (its shims and containers keep running,
// as on a real node).
func (c *Cluster) StopContainerd() { c.stopProcess("containerd") }

// StartKubelet starts the kubelet.
func (c *Cluster) StartKubelet() error {
	return c.startProcess("kubelet", filepath.Join(c.opts.NodeBin, "kubelet"),
		"--config", c.path("kubelet.yaml"),
		"--kubeconfig", c.path("kubelet.kubeconfig"),
		"--root-dir", c.path("kubelet"), "--cert-dir", c.path("kubelet/pki"),
		"--hostname-override", NodeName, "--node-ip", NodeIP, "--v", "2")
}

// StopKubelet stops the kubelet (its Pods keep running).
func (c *Cluster) StopKubelet() { c.stopProcess("kubelet") }

// Ctr runs containerd's ctr in the k8s.io namespace.
func (c *Cluster) Ctr(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "ctr", append([]string{"--address", ContainerdSocket, "-n", "k8s.io"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// ImportImage loads a docker archive into containerd, where the kubelet
// finds it without pulling.
func (c *Cluster) ImportImage(ctx context.Context, archive string) error {
	_, err := c.Ctr(ctx, "images", "import", archive)
	return err
}

func (c *Cluster) startProcess(name, bin string, args ...string) error {
	p, err := start(c.LogDir, name, bin, args...)
	if err != nil {
		return err
	}
	c.procs[name] = p
	return nil
}

func (c *Cluster) stopProcess(name string) {
	if p := c.procs[name]; p != nil {
		p.stop(20 * time.Second)
		delete(c.procs, name)
	}
}

// waitFor polls check until it succeeds, the timeout passes, or a component
// exits; a failure says which, with the end of its log.
func (c *Cluster) waitFor(ctx context.Context, what string, timeout time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return nil
		}
		for _, p := range c.procs {
			if done, exitErr := p.exited(); done {
				return fmt.Errorf("waiting for %s: %s exited (%v):\n%s", what, p.name, exitErr, p.tail(30))
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %s: %w", what, timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (c *Cluster) waitNodeReady(ctx context.Context) error {
	return c.waitFor(ctx, "node "+NodeName, 120*time.Second, func() error {
		n, err := c.Client.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		ready := false
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady {
				ready = cond.Status == corev1.ConditionTrue
				if !ready {
					return fmt.Errorf("NotReady: %s", cond.Message)
				}
			}
		}
		if !ready {
			return errors.New("no Ready condition yet")
		}
		// Pods are admitted once the namespace's ServiceAccount exists.
		if _, err := c.Client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{}); err != nil {
			if apierrors.IsNotFound(err) {
				return errors.New("default ServiceAccount not created yet")
			}
			return err
		}
		return nil
	})
}

// Stop stops every component, kills every container, and removes the
// cluster's files, mounts, cgroups and network. Logs stay in LogDir.
func (c *Cluster) Stop() error {
	// The node's components, its containers (containerd waits for them
	// otherwise, past its 20 s grace), then the control plane, so that
	// nothing is restarted or rescheduled while it goes.
	for _, name := range []string{"kube-proxy", "kubelet", "kube-scheduler", "kube-controller-manager"} {
		c.stopProcess(name)
	}
	killed := killCgroupTree("kubepods")
	for _, name := range []string{"containerd", "kube-apiserver", "etcd"} {
		c.stopProcess(name)
	}
	if c.opts.NodeBin != "" {
		// kube-proxy removes its own rules; what it misses goes below.
		_, _ = run(filepath.Join(c.opts.NodeBin, "kube-proxy"), "--cleanup")
	}
	// The rest (containers, shims, mounts, cgroups, files, network) goes
	// as an earlier run's would after its process died.
	err := errors.Join(killed, cleanLeftovers())
	if c.net != nil {
		err = errors.Join(err, c.net.restoreSysctls())
	}
	return err
}

// cleanLeftovers removes what any cluster of this package leaves when its
// process dies: containers, shims, mounts, cgroups, network.
func cleanLeftovers() error {
	var errs []error
	errs = append(errs, killCgroupTree("kubepods"))
	killMatching("containerd-shim", "-address", ContainerdSocket)
	killMatching("containerd", "--config", "/var/tmp/eso-node-")
	stale, _ := filepath.Glob("/var/tmp/eso-node-*")
	errs = append(errs, unmountUnder(append(stale, "/run/containerd")...))
	for _, d := range stale {
		errs = append(errs, os.RemoveAll(d))
	}
	errs = append(errs, removeNetworkLeftovers())
	return errors.Join(errs...)
}

func freePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
