#!/usr/bin/env bash
# make demo: a local control plane, eso in core mode, the examples applied and
# synced, the resulting Secrets printed. Stops by itself unless DEMO_KEEP=1.
#
# Needs KUBEBUILDER_ASSETS (kube-apiserver, etcd, kubectl) and ESO_BIN; the
# Makefile provides both.
set -euo pipefail
cd "$(dirname "$0")/../.."

: "${KUBEBUILDER_ASSETS:?set by make demo}"
: "${ESO_BIN:?set by make demo}"
KUBECTL="$KUBEBUILDER_ASSETS/kubectl"
work=$(mktemp -d "${TMPDIR:-/tmp}/eso-demo.XXXXXX")
export KUBECONFIG="$work/kubeconfig"
pids=()

cleanup() {
  local code=$?
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ "$code" -ne 0 ]; then
    echo "demo failed; last eso log lines:" >&2
    tail -n 30 "$work/eso.log" >&2 2>/dev/null || true
  fi
  rm -rf "$work"
  exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "Starting a local control plane (kube-apiserver + etcd) with eso's CRDs"
go build -o "$work/controlplane" ./build/controlplane
"$work/controlplane" --write-kubeconfig "$KUBECONFIG" --crds apis/crds 2>"$work/controlplane.log" &
pids+=($!)
for _ in $(seq 1 300); do [ -s "$KUBECONFIG" ] && break; sleep 0.1; done
[ -s "$KUBECONFIG" ] || { cat "$work/controlplane.log" >&2; echo "control plane did not start" >&2; exit 1; }
"$KUBECTL" version 2>/dev/null | sed 's/^/  /'

step "Running eso in core mode ($("$ESO_BIN" version | tr '\n' ' '))"
"$ESO_BIN" --mode=core --kubeconfig "$KUBECONFIG" --metrics-bind-address=0 \
  --health-probe-bind-address=127.0.0.1:0 --log-format=console >"$work/eso.log" 2>&1 &
pids+=($!)

step "Applying the examples (build/demo/examples)"
"$KUBECTL" apply -f build/demo/examples/00-namespaces.yaml
"$KUBECTL" apply -f build/demo/examples/

step "Waiting for every ExternalSecret to be Ready"
"$KUBECTL" wait externalsecrets --all --all-namespaces --for=condition=Ready --timeout=60s

step "Stores, generators and ExternalSecrets"
# Plain "secretstores" means upstream's external-secrets.io/v1 kind; the
# category lists eso's own stores (secretstore.external-secrets.io) and v1's.
"$KUBECTL" get external-secrets-stores --all-namespaces
echo
"$KUBECTL" get generators --all-namespaces
echo
"$KUBECTL" get externalsecrets --all-namespaces
echo
"$KUBECTL" get generatorstates --all-namespaces

step "Synced Secrets (decoded)"
"$KUBECTL" get externalsecrets --all-namespaces \
  -o go-template='{{range .items}}{{.metadata.namespace}} {{.status.binding.name}}{{"\n"}}{{end}}' |
while read -r ns name; do
  echo "Secret $ns/$name:"
  "$KUBECTL" get secret -n "$ns" "$name" \
    -o go-template='{{range $k, $v := .data}}  {{$k}} = {{$v | base64decode}}{{"\n"}}{{end}}'
done

if [ "${DEMO_KEEP:-}" = "1" ]; then
  step "Still running: export KUBECONFIG=$KUBECONFIG and use $KUBECTL; Ctrl-C stops everything"
  wait "${pids[0]}"
else
  step "Done; shutting down (DEMO_KEEP=1 make demo keeps it running)"
fi
