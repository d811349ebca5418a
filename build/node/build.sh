#!/usr/bin/env bash
# Builds the node half of a single-node cluster (kubelet, kube-proxy,
# kube-controller-manager, kube-scheduler) from Go modules into $1, with the
# same module and pins as the envtest control plane (build/envtest), so the
# two halves are one Kubernetes version; and the cluster's DNS, CoreDNS with
# the few plugins it needs (build/coredns). Outputs are cached by the caller
# under a versioned directory so a fresh clone reuses them.
set -euo pipefail
out=${1:?usage: build.sh OUTPUT_DIR}
cd "$(dirname "$0")/../envtest"
K8S=v1.34.4
LDF="-s -w -X k8s.io/component-base/version.gitVersion=$K8S -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=34 -X k8s.io/client-go/pkg/version.gitVersion=$K8S"
export CGO_ENABLED=0 GOFLAGS=-mod=mod
tmp="$out.tmp.$$"
mkdir -p "$tmp"
for cmd in kubelet kube-proxy kube-controller-manager kube-scheduler; do
  go build -trimpath -ldflags "$LDF" -o "$tmp/$cmd" "k8s.io/kubernetes/cmd/$cmd"
done
(cd ../coredns && go build -trimpath -ldflags "-s -w" -o "$tmp/coredns" .)
rm -rf "$out"
mv "$tmp" "$out"
