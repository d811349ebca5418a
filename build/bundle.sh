#!/usr/bin/env bash
# make bundle: everything an air-gapped install needs, in one file:
# the image for every architecture (a docker archive each; the OCI layout
# of `make image` holds the same blobs, so it stays out),
# both charts packaged, the single install file, images.txt, an SBOM per
# architecture and SHA256SUMS, plus a README saying how to install.
#   build/bundle.sh OUT VERSION IMAGE_DIR IMAGE_REF INSTALL_FILE HELM CYCLONEDX BIN_DIR
set -euo pipefail
out=$1 version=$2 image_dir=$3 image_ref=$4 install=$5 helm=$6 cyclonedx=$7 bin_dir=$8
cd "$(dirname "$0")/.."
name=eso-${version}-bundle
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/$name
mkdir -p "$root/images" "$root/charts" "$root/sbom"

tag=${image_ref##*:}
for archive in "$image_dir"/eso-"$tag"-linux-*.tar; do
  cp "$archive" "$root/images/"
done
echo "$image_ref" > "$root/images.txt"

for chart in charts/eso charts/eso-provider; do
  HELM_CACHE_HOME=$stage/helm HELM_CONFIG_HOME=$stage/helm \
    "$helm" package "$chart" --app-version "$tag" --destination "$root/charts" > /dev/null
done
cp "$install" "$root/eso-${version}-install.yaml"

for bin in "$bin_dir"/linux-*/eso; do
  arch=$(basename "$(dirname "$bin")")
  "$cyclonedx" bin -json -noserial -notimestamp -std -output "$root/sbom/eso-${version}-${arch}.cdx.json" -version "$version" "$bin" 2> /dev/null
done

chart_version=$(sed -n 's/^version: *//p' charts/eso/Chart.yaml)
sed "s/@VERSION@/${version}/g; s/@TAG@/${tag}/g; s/@CHART_VERSION@/${chart_version}/g; s|@IMAGE@|${image_ref}|g" build/bundle-README.md > "$root/README.md"

(cd "$root" && find . -type f ! -name SHA256SUMS -printf '%P\n' | LC_ALL=C sort | xargs sha256sum > SHA256SUMS)
mkdir -p "$(dirname "$out")"
epoch=${SOURCE_DATE_EPOCH:-0}
tar --sort=name --mtime="@${epoch}" --owner=0 --group=0 --numeric-owner -C "$stage" -cf - "$name" | gzip -n > "$out"
echo "$out ($(du -h "$out" | cut -f1))"
