#!/usr/bin/env bash
# Builds the helm CLI pinned by e2e/cluster/helm/go.mod from the Go module proxy into
# .cache/tools/<key>/helm. The key covers the Go toolchain, the pinned version, the link flags and
# go.sum, so a cached binary makes this a no-op. Prints the binary's path on the last line.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
module="$root/e2e/cluster/helm"
package=$(awk '$1 == "tool" {print $2; exit}' "$module/go.mod")
major=$(sed -n 's#^helm\.sh/helm/\(v[0-9]*\)/cmd/helm$#\1#p' <<<"$package")
[ -n "$major" ] || { echo "helm: cannot find the helm tool line in $module/go.mod" >&2; exit 1; }
version=$(awk -v mod="helm.sh/helm/$major" '$1 == mod {print $2; exit}' "$module/go.mod")
[ -n "$version" ] || { echo "helm: cannot find the helm.sh/helm/$major version in $module/go.mod" >&2; exit 1; }
v="helm.sh/helm/$major/internal/version"
ld="-s -w -X $v.version=$version -X $v.metadata= -X $v.gitTreeState=clean"
key=$( { go version; echo "$package $version $ld"; cat "$module/go.sum"; } | sha256sum | cut -c1-16)
cache="$root/.cache/tools"
dest="$cache/$key"
if [ -x "$dest/helm" ]; then
  echo "$dest/helm"
  exit 0
fi
mkdir -p "$cache"
# Test files that start at the same time wait for one build instead of each running their own.
exec 9>"$cache/.helm-build.lock"
flock 9
if [ -x "$dest/helm" ]; then
  echo "$dest/helm"
  exit 0
fi
tmp=$(mktemp -d "$cache/tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
log="$tmp/build.log"
echo "helm: building $version from the Go module proxy (a few minutes on 2 cores); later runs reuse $dest" >&2
if ! (cd "$module" && CGO_ENABLED=0 go build -trimpath -ldflags "$ld" -o "$tmp/helm" "$package") >"$log" 2>&1; then
  echo "helm: build failed; command: (cd $module && go build -trimpath -ldflags '$ld' -o <tmp>/helm $package)" >&2
  tail -n 30 "$log" >&2
  exit 1
fi
rm -f "$log"
rm -rf "$dest"
mv "$tmp" "$dest"
trap - EXIT
echo "$dest/helm"
