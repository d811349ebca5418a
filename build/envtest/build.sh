#!/usr/bin/env bash
# Builds the envtest control plane (kube-apiserver, kubectl, etcd) from Go modules into $1.
# The module in this directory pins k8s.io/kubernetes and etcd; outputs are cached by the
# caller under a versioned directory so a fresh clone reuses them.
set -euo pipefail
out=${1:?usage: build.sh OUTPUT_DIR}
cd "$(dirname "$0")"
K8S=v1.34.4
LDF="-s -w -X k8s.io/component-base/version.gitVersion=$K8S -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=34 -X k8s.io/client-go/pkg/version.gitVersion=$K8S"
export CGO_ENABLED=0 GOFLAGS=-mod=mod
tmp="$out.tmp.$$"
mkdir -p "$tmp"
go build -trimpath -ldflags "$LDF" -o "$tmp/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
go build -trimpath -ldflags "$LDF" -o "$tmp/kubectl" k8s.io/kubernetes/cmd/kubectl
go build -trimpath -ldflags "-s -w" -o "$tmp/etcd" go.etcd.io/etcd/server/v3
rm -rf "$out"
mv "$tmp" "$out"
