#!/usr/bin/env bash
# Builds Prometheus's promtool pinned by e2e/cluster/promtool/go.mod from the Go module proxy into
# .cache/tools/<key>/promtool (or $KRELOAD_TOOLS_CACHE/<key>/), without the service-discovery
# plugins it never needs to test rules. The key covers the Go toolchain, the pinned version, the
# link flags, the tags and go.sum, so a cached binary makes this a no-op. Prints the binary's path
# on the last line.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
module="$root/e2e/cluster/promtool"
package=$(awk '$1 == "tool" {print $2; exit}' "$module/go.mod")
[ "$package" = "github.com/prometheus/prometheus/cmd/promtool" ] ||
  { echo "promtool: cannot find the promtool tool line in $module/go.mod" >&2; exit 1; }
version=$(awk '$1 == "github.com/prometheus/prometheus" {print $2; exit}' "$module/go.mod")
[ -n "$version" ] || { echo "promtool: cannot find the github.com/prometheus/prometheus version in $module/go.mod" >&2; exit 1; }
# Prometheus 3.x.y is module version v0.3xx.y (v0.316.0 is 3.16.0).
release=$version
if [[ $version =~ ^v0\.3([0-9][0-9])\.([0-9]+)$ ]]; then
  release="3.$((10#${BASH_REMATCH[1]})).${BASH_REMATCH[2]}"
fi
v="github.com/prometheus/common/version"
ld="-s -w -X $v.Version=$release -X $v.Branch=release -X $v.Revision=$version"
cache=${KRELOAD_TOOLS_CACHE:-$root/.cache/tools}
# shellcheck source=go-tool.sh
. "$root/scripts/go-tool.sh"
build_go_tool promtool "$module" "$package" "$version" "$ld" "$cache" promtool "a few minutes on 2 cores" remove_all_sd
