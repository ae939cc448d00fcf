#!/usr/bin/env bash
# Copies the CRDs of kreload's optional integrations into .cache/crds/<key>/ and prints that
# directory on the last line. The manifests come from the projects' own Go modules, pinned (and
# verified by go.sum) in crd-modules/<project>/go.mod and fetched with `go mod download -json`;
# the DeploymentConfig stand-in is hand-written (see its header). The key covers the pins and the
# stand-in, so a complete copy makes this a no-op. The module cache stays read-only and outside
# the repository; nothing here is committed.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
modules="$root/e2e/cluster/crd-modules"

# One row per project: its module directory under crd-modules/, its module path, then the CRD
# manifests to copy, relative to the module root.
SOURCES=(
  "argo-rollouts github.com/argoproj/argo-rollouts manifests/crds/rollout-crd.yaml"
  "secrets-store-csi-driver sigs.k8s.io/secrets-store-csi-driver deploy/secrets-store.csi.x-k8s.io_secretproviderclasses.yaml deploy/secrets-store.csi.x-k8s.io_secretproviderclasspodstatuses.yaml"
)
HAND_WRITTEN=("$modules/deploymentconfig-crd.yaml")

key=$(cat "$modules"/*/go.mod "$modules"/*/go.sum "${HAND_WRITTEN[@]}" | sha256sum | cut -c1-16)
cache="$root/.cache/crds"
dest="$cache/$key"
if [ -f "$dest/.complete" ]; then
  echo "$dest"
  exit 0
fi

mkdir -p "$cache"
tmp=$(mktemp -d "$cache/tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The module's directory in the read-only module cache, at the version its go.mod pins.
module_dir() { # module directory, module path
  local json dir
  json=$(cd "$modules/$1" && go mod download -json "$2") || {
    echo "crds: go mod download $2 failed (in $modules/$1):" >&2
    echo "$json" >&2
    exit 1
  }
  dir=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' <<<"$json")
  if [ -z "$dir" ] || [ ! -d "$dir" ]; then
    echo "crds: no module directory for $2:" >&2
    echo "$json" >&2
    exit 1
  fi
  echo "$dir"
}

for row in "${SOURCES[@]}"; do
  read -r -a fields <<<"$row"
  dir=$(module_dir "${fields[0]}" "${fields[1]}")
  for file in "${fields[@]:2}"; do
    cp "$dir/$file" "$tmp/"
  done
done
cp "${HAND_WRITTEN[@]}" "$tmp/"
# Files copied out of the module cache keep its read-only mode.
chmod u+w "$tmp"/*
touch "$tmp/.complete"
rm -rf "$dest"
mv "$tmp" "$dest"
trap - EXIT
echo "crds: copied $(find "$dest" -name '*.yaml' | wc -l) CRD manifests to $dest" >&2
echo "$dest"
