package node

import (
	"fmt"
	"os"
	"path/filepath"
)

// ContainerdSocket is where containerd listens: its default address, so
// that `ctr` and the bundle's commands reach it as written.
const ContainerdSocket = "/run/containerd/containerd.sock"

// writeConfigs writes containerd's, the CNI plugins', kubelet's and
// kube-proxy's configuration files into c.dir.
func (c *Cluster) writeConfigs() error {
	files := map[string]string{
		"containerd.toml": fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
[grpc]
  address = %[3]q
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[4]q
  # This machine withholds CAP_SYS_RESOURCE: no process may lower its OOM
  # score, and runc fails on the -998 containerd gives every sandbox.
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = %[5]q
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
`, c.path("containerd/root"), c.path("containerd/state"), ContainerdSocket, PauseImage, c.path("cni/conf")),

		// Pods get addresses from PodCIDR and a route to Range only: no
		// default route, so nothing they send can head off the machine.
		"cni/conf/10-eso-node.conflist": fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "eso-node",
  "plugins": [{
    "type": "bridge",
    "bridge": %[1]q,
    "isGateway": true,
    "isDefaultGateway": false,
    "ipMasq": false,
    "hairpinMode": true,
    "ipam": {
      "type": "host-local",
      "ranges": [[{"subnet": %[2]q, "gateway": %[3]q}]],
      "routes": [{"dst": %[4]q, "gw": %[3]q}],
      "dataDir": %[5]q
    }
  }]
}
`, Bridge, PodCIDR, NodeIP, Range, c.path("cni/ipam")),

		"kubelet.yaml": fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %[1]s
port: %[2]d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %[3]d
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://%[4]s
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: %[5]s}
authorization: {mode: Webhook}
clusterDomain: cluster.local
clusterDNS: [%[7]s]
resolvConf: ""
podCIDR: %[6]s
syncFrequency: 10s
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {"memory.available": "100Mi", "nodefs.available": "1%%", "imagefs.available": "1%%", "nodefs.inodesFree": "1%%"}
rotateCertificates: false
serverTLSBootstrap: false
`, NodeIP, c.ports.kubelet, c.ports.kubeletHealthz, ContainerdSocket, c.pki.caFile(), PodCIDR, DNSServiceIP),

		"kube-proxy.yaml": fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: %[1]s}
mode: iptables
clusterCIDR: %[2]s
hostnameOverride: %[3]s
bindAddress: %[4]s
healthzBindAddress: 127.0.0.1:%[5]d
metricsBindAddress: 127.0.0.1:%[6]d
nodePortAddresses: [%[4]s/32]
conntrack: {maxPerCore: 0, min: 0}
`, c.path("kube-proxy.kubeconfig"), PodCIDR, NodeName, NodeIP, c.ports.proxyHealthz, c.ports.proxyMetrics),
	}
	for name, content := range files {
		path := c.path(name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}
