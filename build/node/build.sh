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
source ./kube.sh
tmp="$out.tmp.$$"
mkdir -p "$tmp"
build_kube "$tmp" kubelet kube-proxy kube-controller-manager kube-scheduler
(cd ../coredns && go build -trimpath -ldflags "-s -w" -o "$tmp/coredns" .)
finish "$tmp" "$out"
