#!/usr/bin/env bash
# Builds umoci pinned by e2e/cluster/umoci/go.mod from the Go module proxy into
# .cache/tools/<key>/umoci (or $KRELOAD_TOOLS_CACHE/<key>/). The e2e harness unpacks the image with
# it: Debian's umoci 0.4.7, which scripts/image.sh builds with, cannot unpack zstd layers (umoci
# does from 0.5.0). The key covers the Go toolchain, the pinned version, the link flags and go.sum,
# so a cached binary makes this a no-op. Prints the binary's path on the last line.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
module="$root/e2e/cluster/umoci"
package=$(awk '$1 == "tool" {print $2; exit}' "$module/go.mod")
[ "$package" = "github.com/opencontainers/umoci/cmd/umoci" ] ||
  { echo "umoci: cannot find the umoci tool line in $module/go.mod" >&2; exit 1; }
version=$(awk '$1 == "github.com/opencontainers/umoci" {print $2; exit}' "$module/go.mod")
[ -n "$version" ] || { echo "umoci: cannot find the github.com/opencontainers/umoci version in $module/go.mod" >&2; exit 1; }
# umoci embeds its own version (its VERSION file).
ld="-s -w"
cache=${KRELOAD_TOOLS_CACHE:-$root/.cache/tools}
# shellcheck source=go-tool.sh
. "$root/scripts/go-tool.sh"
build_go_tool umoci "$module" "$package" "$version" "$ld" "$cache" umoci "about a minute on 2 cores"
