#!/usr/bin/env bash
# Builds the OCI registry (github.com/distribution/distribution/v3's `registry`, the registry behind
# Docker Hub and most self-hosted ones) pinned by e2e/cluster/registry/go.mod from the Go module
# proxy into .cache/tools/<key>/registry (or $KRELOAD_TOOLS_CACHE/<key>/). The e2e harness serves the
# chart as an OCI artifact from it. The key covers the Go toolchain, the pinned version, the link
# flags and go.sum, so a cached binary makes this a no-op. Prints the binary's path on the last line.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
module="$root/e2e/cluster/registry"
package=$(awk '$1 == "tool" {print $2; exit}' "$module/go.mod")
[ "$package" = "github.com/distribution/distribution/v3/cmd/registry" ] ||
  { echo "registry: cannot find the registry tool line in $module/go.mod" >&2; exit 1; }
version=$(awk '$1 == "github.com/distribution/distribution/v3" {print $2; exit}' "$module/go.mod")
[ -n "$version" ] || { echo "registry: cannot find the distribution/v3 version in $module/go.mod" >&2; exit 1; }
ld="-s -w -X github.com/distribution/distribution/v3/version.version=$version"
cache=${KRELOAD_TOOLS_CACHE:-$root/.cache/tools}
# shellcheck source=go-tool.sh
. "$root/scripts/go-tool.sh"
build_go_tool registry "$module" "$package" "$version" "$ld" "$cache" registry "a few minutes on 2 cores"
