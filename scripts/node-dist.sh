#!/usr/bin/env bash
# Prints the path of the Node.js binary for a platform (linux-x64, linux-arm64, darwin-x64,
# darwin-arm64), at the version of the project's `node` devDependency. The host's own platform is
# the binary npm installed; another comes from npm's node-<platform> package of the same version
# (the package the `node` devDependency installs on that platform), fetched with `npm pack` (which
# checks the registry's integrity hash) into .cache/node/<package>-<version>/ once.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
platform=${1:?usage: node-dist.sh linux-x64|linux-arm64|darwin-x64|darwin-arm64}
node24=$(cd "$root" && npx --no-install node -p process.execPath)
version=$("$node24" -p "require('$root/node_modules/node/package.json').version")
host=$("$node24" -p 'process.platform + "-" + process.arch')
if [ "$platform" = "$host" ]; then
  readlink -f "$node24"
  exit 0
fi
case "$platform" in
  linux-x64 | linux-arm64 | darwin-x64 | darwin-arm64) ;;
  *) echo "node-dist: unknown platform $platform" >&2; exit 2 ;;
esac
dest="$root/.cache/node/node-$platform-$version"
if [ ! -x "$dest/bin/node" ]; then
  mkdir -p "$root/.cache/node"
  tmp=$(mktemp -d "$root/.cache/node/tmp.XXXXXX")
  echo "node-dist: npm pack node-$platform@$version" >&2
  (cd "$tmp" && npm pack --silent "node-$platform@$version" >/dev/null)
  tar -xzf "$tmp"/node-"$platform"-"$version".tgz -C "$tmp"
  rm -rf "$dest"
  mv "$tmp/package" "$dest"
  rm -rf "$tmp"
fi
echo "$dest/bin/node"
