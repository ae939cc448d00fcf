#!/usr/bin/env bash
# Builds toxiproxy-server pinned by e2e/cluster/toxiproxy/go.mod from the Go module proxy into
# .cache/tools/<key>/toxiproxy-server (or $KRELOAD_TOOLS_CACHE/<key>/ when set, for worktrees whose
# .cache/tools is shared read-only). The key covers the Go toolchain, the pinned version, the link
# flags and go.sum, so a cached binary makes this a no-op. Prints the binary's path on the last line.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
module="$root/e2e/cluster/toxiproxy"
package=$(awk '$1 == "tool" {print $2; exit}' "$module/go.mod")
[ "$package" = "github.com/Shopify/toxiproxy/v2/cmd/server" ] ||
  { echo "toxiproxy: cannot find the toxiproxy server tool line in $module/go.mod" >&2; exit 1; }
version=$(awk '$1 == "github.com/Shopify/toxiproxy/v2" {print $2; exit}' "$module/go.mod")
[ -n "$version" ] || { echo "toxiproxy: cannot find the github.com/Shopify/toxiproxy/v2 version in $module/go.mod" >&2; exit 1; }
ld="-s -w -X github.com/Shopify/toxiproxy/v2.Version=$version"
cache=${KRELOAD_TOOLS_CACHE:-$root/.cache/tools}
# shellcheck source=go-tool.sh
. "$root/scripts/go-tool.sh"
build_go_tool toxiproxy "$module" "$package" "$version" "$ld" "$cache" toxiproxy-server "about a minute on 2 cores"
