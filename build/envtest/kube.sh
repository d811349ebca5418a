# Sourced by build.sh here and by build/node/build.sh, so the control plane
# and the node are one Kubernetes version: the version this module's go.mod
# pins, stamped into each binary, built into a temporary directory that
# replaces the output only once complete.
export CGO_ENABLED=0 GOFLAGS=-mod=mod
K8S=$(sed -n 's/^\tk8s.io\/kubernetes //p' "$(dirname "${BASH_SOURCE[0]}")/go.mod")
minor=${K8S#v1.}
minor=${minor%%.*}
LDF="-s -w -X k8s.io/component-base/version.gitVersion=$K8S -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/client-go/pkg/version.gitVersion=$K8S"

# build_kube DIR CMD...: builds k8s.io/kubernetes/cmd/CMD into DIR, stamped.
build_kube() {
  local dir=$1
  shift
  for cmd in "$@"; do
    go build -trimpath -ldflags "$LDF" -o "$dir/$cmd" "k8s.io/kubernetes/cmd/$cmd"
  done
}

# finish TMP OUT: TMP, complete, becomes OUT.
finish() {
  rm -rf "$2"
  mv "$1" "$2"
}
