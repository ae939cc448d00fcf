#!/usr/bin/env bash
# Builds krew (the kubectl plugin manager) pinned by e2e/cluster/krew/go.mod from the Go module
# proxy into .cache/tools/<key>/krew (or $KRELOAD_TOOLS_CACHE/<key>/). The plugin e2e installs the
# release's kubectl-kreload with it from the krew manifest and archive, as a user would. The key
# covers the Go toolchain, the pinned version, the link flags and go.sum, so a cached binary makes
# this a no-op. Prints the binary's path on the last line.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
module="$root/e2e/cluster/krew"
package=$(awk '$1 == "tool" {print $2; exit}' "$module/go.mod")
[ "$package" = "sigs.k8s.io/krew/cmd/krew" ] ||
  { echo "krew: cannot find the krew tool line in $module/go.mod" >&2; exit 1; }
version=$(awk '$1 == "sigs.k8s.io/krew" {print $2; exit}' "$module/go.mod")
[ -n "$version" ] || { echo "krew: cannot find the sigs.k8s.io/krew version in $module/go.mod" >&2; exit 1; }
v="sigs.k8s.io/krew/internal/version"
ld="-s -w -X $v.gitTag=$version -X $v.gitCommit=$version"
cache=${KRELOAD_TOOLS_CACHE:-$root/.cache/tools}
# shellcheck source=go-tool.sh
. "$root/scripts/go-tool.sh"
build_go_tool krew "$module" "$package" "$version" "$ld" "$cache" krew "about two minutes on 2 cores"
