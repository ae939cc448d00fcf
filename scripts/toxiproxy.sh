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
key=$( { go version; echo "$package $version $ld"; cat "$module/go.sum"; } | sha256sum | cut -c1-16)
cache=${KRELOAD_TOOLS_CACHE:-$root/.cache/tools}
dest="$cache/$key"
if [ -x "$dest/toxiproxy-server" ]; then
  echo "$dest/toxiproxy-server"
  exit 0
fi
mkdir -p "$cache"
# Test files that start at the same time wait for one build instead of each running their own.
exec 9>"$cache/.toxiproxy-build.lock"
flock 9
if [ -x "$dest/toxiproxy-server" ]; then
  echo "$dest/toxiproxy-server"
  exit 0
fi
tmp=$(mktemp -d "$cache/tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
log="$tmp/build.log"
echo "toxiproxy: building $version from the Go module proxy (about a minute on 2 cores); later runs reuse $dest" >&2
if ! (cd "$module" && CGO_ENABLED=0 go build -trimpath -ldflags "$ld" -o "$tmp/toxiproxy-server" "$package") >"$log" 2>&1; then
  echo "toxiproxy: build failed; command: (cd $module && go build -trimpath -ldflags '$ld' -o <tmp>/toxiproxy-server $package)" >&2
  tail -n 30 "$log" >&2
  exit 1
fi
rm -f "$log"
rm -rf "$dest"
mv "$tmp" "$dest"
trap - EXIT
echo "$dest/toxiproxy-server"
