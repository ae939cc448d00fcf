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
# shellcheck source=go-tool.sh
. "$root/scripts/go-tool.sh"
build_go_tool helm "$module" "$package" "$version" "$ld" "$root/.cache/tools" helm "a few minutes on 2 cores"
