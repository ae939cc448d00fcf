#!/usr/bin/env bash
# `npm run release`: everything a release publishes, in one folder (.cache/release/<version>/, or
# $1), with SHA256SUMS over it:
#   kreload-<version>.oci.tar                      the image: one OCI index of linux/amd64 and
#                                                  linux/arm64 (scripts/image.sh)
#   kreload-<version>-linux-<arch>.docker.tar.gz   each architecture's image for `docker load -i`
#   kreload-<version>-linux-<arch>.sbom.cdx.json   each architecture's SBOM (CycloneDX JSON)
#   kreload-<version>.tgz                          the packaged chart (helm package; push it with
#                                                  `helm push kreload-<version>.tgz oci://<registry>/<path>`)
#   kubectl-kreload-<version>-linux-<arch>.tar.gz  the plugin executables (scripts/plugin.sh)
#   kreload.yaml                                   their krew manifest
#   SHA256SUMS                                     `sha256sum -c SHA256SUMS` checks the folder
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
node24=$(cd "$root" && npx --no-install node -p process.execPath)
version=$("$node24" -p "require('$root/package.json').version")
out=${1:-"$root/.cache/release/$version"}
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
bash "$root/scripts/image.sh" "$work/image" >/dev/null
cp "$work/image/kreload-$version.oci.tar" "$work"/image/kreload-"$version"-linux-*.docker.tar.gz \
  "$work"/image/kreload-"$version"-linux-*.sbom.cdx.json "$out/"

echo "release: chart" >&2
helm=${HELM:-$(bash "$root/scripts/helm.sh" | tail -n 1)}
"$helm" package "$root/helm/kreload" --destination "$out" >&2

(cd "$out" && sha256sum -- * >"$work/SHA256SUMS" && mv "$work/SHA256SUMS" SHA256SUMS)
ls -l "$out" >&2
echo "$out"
