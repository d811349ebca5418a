#!/usr/bin/env bash
# make sizes: binary size and linked Go modules per build-tag selection: every
# SDK tag of providers/catalog alone, all of them (no tag), the first two
# together, minimal, and without the v1 store layer (nov1).
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mapfile -t tags < <(go run ./build/wiring -tags)
selections=("" "${tags[@]}")
if [ "${#tags[@]}" -ge 2 ]; then selections+=("${tags[0]},${tags[1]}"); fi
selections+=(minimal nov1 minimal,nov1)
printf '%-12s %10s %8s\n' "TAGS" "SIZE(MiB)" "MODULES"
for tags in "${selections[@]}"; do
  CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -tags "$tags" -o "$tmp/eso" .
  size=$(stat -c %s "$tmp/eso")
  modules=$(go version -m "$tmp/eso" | grep -c $'^\tdep')
  awk -v t="${tags:-(all)}" -v s="$size" -v m="$modules" 'BEGIN { printf "%-12s %10.1f %8d\n", t, s / 1048576, m }'
done
