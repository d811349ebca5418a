#!/usr/bin/env bash
# make manifests: eso's whole install as one YAML stream (Namespace, CRDs,
# RBAC, Deployment, ...), rendered from charts/eso so that there is no
# second source of truth. Extra arguments go to `helm template`
# (e.g. --set image.airgapped=true).
#   build/manifests.sh HELM IMAGE_REPOSITORY IMAGE_TAG NAMESPACE [helm template args...]
set -euo pipefail
helm=$1 repository=$2 tag=$3 namespace=$4
shift 4
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat <<YAML
# eso ${tag}: kubectl apply --server-side -f this file
apiVersion: v1
kind: Namespace
metadata:
  name: ${namespace}
  labels:
    app.kubernetes.io/name: eso
YAML
HELM_CACHE_HOME="$tmp/cache" HELM_CONFIG_HOME="$tmp/config" \
  "$helm" template eso charts/eso --namespace "$namespace" --set "image.repository=${repository}" --set-string "image.tag=${tag}" "$@"
