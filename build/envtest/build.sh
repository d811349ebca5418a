#!/usr/bin/env bash
# Builds the envtest control plane (kube-apiserver, kubectl, etcd) from Go modules into $1.
# The module in this directory pins k8s.io/kubernetes and etcd; outputs are cached by the
# caller under a versioned directory so a fresh clone reuses them.
set -euo pipefail
out=${1:?usage: build.sh OUTPUT_DIR}
cd "$(dirname "$0")"
source ./kube.sh
tmp="$out.tmp.$$"
mkdir -p "$tmp"
build_kube "$tmp" kube-apiserver kubectl
go build -trimpath -ldflags "-s -w" -o "$tmp/etcd" go.etcd.io/etcd/server/v3
finish "$tmp" "$out"
