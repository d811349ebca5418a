#!/usr/bin/env bash
# make bundle: everything an air-gapped install needs, in one file:
# the image for every architecture (a docker archive each; the OCI layout
# of `make image` holds the same blobs, so it stays out),
# both charts packaged, the single install file, images.txt, an SBOM per
# architecture and SHA256SUMS, plus a README saying how to install.
#   build/bundle.sh OUT VERSION IMAGE_DIR IMAGE_REF INSTALL_FILE HELM CYCLONEDX BIN_DIR "ARCHS"
set -euo pipefail
out=$1 version=$2 image_dir=$3 image_ref=$4 install=$5 helm=$6 cyclonedx=$7 bin_dir=$8 archs=$9
cd "$(dirname "$0")/.."
name=eso-${version}-bundle
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/$name
mkdir -p "$root/images" "$root/charts" "$root/sbom"

tag=${image_ref##*:}
for arch in $archs; do
  cp "$image_dir/eso-$tag-linux-$arch.tar" "$root/images/"
done
echo "$image_ref" > "$root/images.txt"

for chart in charts/eso charts/eso-provider; do
  HELM_CACHE_HOME=$stage/helm HELM_CONFIG_HOME=$stage/helm \
    "$helm" package "$chart" --app-version "$tag" --destination "$root/charts" > /dev/null
done
cp "$install" "$root/eso-${version}-install.yaml"

# cyclonedx-gomod writes goos/goarch into every purl from `go env`, not
# from the binary: each SBOM is given its binary's. Licences are detected
# from the module cache only (GOPROXY=off: making a bundle fetches nothing;
# GOSUMDB=off: what is in the cache was checked against go.sum when it was
# downloaded); a module not in the cache is listed without one. They are
# recorded as evidence (components[].evidence.licenses), as detected, not
# asserted.
for arch in $archs; do
  GOOS=linux GOARCH=$arch GOPROXY=off GOSUMDB=off "$cyclonedx" bin -json -noserial -notimestamp -std -licenses \
    -output "$root/sbom/eso-${version}-linux-${arch}.cdx.json" -version "$version" "$bin_dir/linux-$arch/eso" 2> /dev/null
done

chart_version=$(sed -n 's/^version: *//p' charts/eso/Chart.yaml)
provider_chart_version=$(sed -n 's/^version: *//p' charts/eso-provider/Chart.yaml)
arch_list=$(echo $archs | sed 's/ /, /g')
sed "s/@VERSION@/${version}/g; s/@TAG@/${tag}/g; s/@CHART_VERSION@/${chart_version}/g; s/@PROVIDER_CHART_VERSION@/${provider_chart_version}/g; s|@IMAGE@|${image_ref}|g; s/@ARCHS@/${arch_list}/g" build/bundle-README.md > "$root/README.md"

(cd "$root" && find . -type f ! -name SHA256SUMS -printf '%P\n' | LC_ALL=C sort | xargs sha256sum > SHA256SUMS)
mkdir -p "$(dirname "$out")"
epoch=${SOURCE_DATE_EPOCH:-0}
tar --sort=name --mtime="@${epoch}" --owner=0 --group=0 --numeric-owner -C "$stage" -cf - "$name" | gzip -n > "$out"
echo "$out ($(du -h "$out" | cut -f1))"
