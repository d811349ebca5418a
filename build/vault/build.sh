#!/usr/bin/env bash
# Builds a real HashiCorp Vault server (v1.21.0) from Go modules into $1 for the
# Vault provider's tests. The module in this directory pins it (later 1.21.x
# patch releases need an unpublished sdk). ~12 min cold on 2 cores, ~344 MiB;
# the caller caches the output under a versioned directory.
set -euo pipefail
out=${1:?usage: build.sh OUTPUT_DIR}
cd "$(dirname "$0")"
tmp="$out.tmp.$$"
mkdir -p "$tmp"
CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$tmp/vault" github.com/hashicorp/vault
"$tmp/vault" version
rm -rf "$out"
mv "$tmp" "$out"
