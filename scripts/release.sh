#!/usr/bin/env bash
# `npm run release`: everything a release publishes, in one folder (.cache/release/<version>/, or
# OUT), with SHA256SUMS over it.
#
# Usage: scripts/release.sh [OUT] [--compression zstd|gzip]
#   --compression  the image layers' encoding, passed to scripts/image.sh (default zstd)
#
#   kreload-<version>.oci.tar                      the image: one OCI index of linux/amd64 and
#                                                  linux/arm64 (scripts/image.sh), zstd layers
#   kreload-<version>-linux-<arch>.docker.tar.gz   each architecture's image for `docker load -i`
#                                                  (uncompressed layers: any Docker version)
#   kreload-<version>-linux-<arch>.sbom.cdx.json   each architecture's SBOM (CycloneDX JSON)
#   kreload-<version>.tgz                          the packaged chart (helm package; push it with
#                                                  `helm push kreload-<version>.tgz oci://<registry>/<path>`)
#   kubectl-kreload-<version>-<os>-<arch>.tar.gz   the plugin executables, linux and darwin
#                                                  (scripts/plugin.sh)
#   kreload.yaml                                   their krew manifest
#   SHA256SUMS                                     `sha256sum -c SHA256SUMS` checks the folder
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
node24=$(cd "$root" && npx --no-install node -p process.execPath)
version=$("$node24" -p "require('$root/package.json').version")
usage="usage: $0 [OUT] [--compression zstd|gzip]"
out=''
image_options=()
while [ $# -gt 0 ]; do
  case $1 in
    --compression)
      [ $# -ge 2 ] || { echo "release: --compression needs zstd or gzip; $usage" >&2; exit 2; }
      image_options+=(--compression "$2")
      shift 2
      ;;
    -*) echo "release: unknown option $1; $usage" >&2; exit 2 ;;
    *)
      [ -z "$out" ] || { echo "release: one output folder only; $usage" >&2; exit 2; }
      out=$1
      shift
      ;;
  esac
done
out=${out:-"$root/.cache/release/$version"}
mkdir -p "$out"
out=$(cd "$out" && pwd)
find "$out" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
work=$(mktemp -d)
# image.sh runs the entrypoint as UID 65532, which must reach its files.
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT

echo "release: plugin executables and krew manifest" >&2
bash "$root/scripts/plugin.sh" "$work/plugin" >&2
cp "$work"/plugin/kubectl-kreload-*.tar.gz "$work/plugin/kreload.yaml" "$out/"

echo "release: image" >&2
bash "$root/scripts/image.sh" "$work/image" "${image_options[@]}" >/dev/null
cp "$work/image/kreload-$version.oci.tar" "$work"/image/kreload-"$version"-linux-*.docker.tar.gz \
  "$work"/image/kreload-"$version"-linux-*.sbom.cdx.json "$out/"

echo "release: chart" >&2
helm=${HELM:-$(bash "$root/scripts/helm.sh" | tail -n 1)}
"$helm" package "$root/helm/kreload" --destination "$out" >&2

(cd "$out" && sha256sum -- * >"$work/SHA256SUMS" && mv "$work/SHA256SUMS" SHA256SUMS)
ls -l "$out" >&2
echo "$out"
