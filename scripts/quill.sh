#!/usr/bin/env bash
# Builds quill pinned by e2e/cluster/quill/go.mod from the Go module proxy into
# .cache/tools/<key>/quill (or $KRELOAD_TOOLS_CACHE/<key>/). scripts/plugin.sh signs the darwin
# executables with it (`quill sign` without a certificate: an ad-hoc signature, as Apple's
# `codesign --sign -` writes), because injecting the plugin invalidates the Node.js binary's own
# signature and macOS on arm64 runs no unsigned code. The key covers the Go toolchain, the pinned
# version, the link flags and go.sum, so a cached binary makes this a no-op. Prints the binary's
# path on the last line.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
module="$root/e2e/cluster/quill"
package=$(awk '$1 == "tool" {print $2; exit}' "$module/go.mod")
[ "$package" = "github.com/anchore/quill/cmd/quill" ] ||
  { echo "quill: cannot find the quill tool line in $module/go.mod" >&2; exit 1; }
version=$(awk '$1 == "github.com/anchore/quill" {print $2; exit}' "$module/go.mod")
[ -n "$version" ] || { echo "quill: cannot find the github.com/anchore/quill version in $module/go.mod" >&2; exit 1; }
ld="-s -w -X main.version=$version"
cache=${KRELOAD_TOOLS_CACHE:-$root/.cache/tools}
# shellcheck source=go-tool.sh
. "$root/scripts/go-tool.sh"
build_go_tool quill "$module" "$package" "$version" "$ld" "$cache" quill "several minutes on 2 cores"
