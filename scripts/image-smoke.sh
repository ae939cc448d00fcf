#!/usr/bin/env bash
# Reproduces the Dockerfile's runtime /app without a container engine: compiles src/ into the
# rolldown bundle, copies what dist/main.js loads (every file of dist/ but the kubectl plugin's
# entry), package.json (the bundle's ESM type and its version) and LICENSE into a clean directory,
# then runs `node dist/main.js --version` on the project's Node 24 from that directory, as UID 65532
# with read-only application files when run as root. There is no node_modules: the bundle imports
# only Node's built-ins (docs/adr/0040-ship-a-bundle.md), and this fails if it needs anything else.
#
# Usage: scripts/image-smoke.sh [--dist DIR] [--app-dir DIR]
#   --dist DIR     copy this compiled output (dist/ after `npm run build`) instead of compiling src/
#   --app-dir DIR  then copy the checked files into DIR (created; must be absent or empty), so that
#                  a caller can start them (scripts/image.sh makes DIR the image's /app). Run as
#                  root, the files are made read-only.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: $0 [--dist DIR] [--app-dir DIR]"
dist=''
app=''
while [ $# -gt 0 ]; do
  case $1 in
    --dist | --app-dir)
      [ $# -ge 2 ] && [ -n "$2" ] || { echo "image-smoke: $1 needs a directory; $usage" >&2; exit 2; }
      if [ "$1" = --dist ]; then dist=$2; else app=$2; fi
      shift 2
      ;;
    *) echo "image-smoke: unknown argument $1; $usage" >&2; exit 2 ;;
  esac
done
node24=$(cd "$root" && npx --no-install node -p process.execPath)
npm_cli=$(readlink -f "$(command -v npm)")
version=$("$node24" -p "require('$root/package.json').version")

target=''
if [ -n "$app" ]; then
  mkdir -p "$app"
  if [ -n "$(ls -A "$app")" ]; then
    echo "image-smoke: --app-dir $app is not empty" >&2
    exit 2
  fi
  target=$(cd "$app" && pwd)
fi
# The copy is checked in a fresh temporary directory, away from the repository's node_modules, and
# moved to --app-dir once it passed.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
app="$work/app"
mkdir -p "$app"
chmod 755 "$app"

if [ -n "$dist" ]; then
  if [ ! -f "$dist/main.js" ]; then
    echo "image-smoke: $dist/main.js does not exist (run npm run build first)" >&2
    exit 2
  fi
  echo "image-smoke: build stage (copy of $dist)" >&2
  cp -R "$dist" "$app/dist"
else
  echo "image-smoke: build stage (npm run build: tsc, then the rolldown bundle)" >&2
  (cd "$root" && "$node24" "$npm_cli" run build --silent >&2)
  cp -R "$root/dist" "$app/dist"
fi
# The kubectl plugin's entry: the one file of dist/ that dist/main.js never imports.
rm "$app/dist/kubectl-kreload.js"
cp "$root/package.json" "$root/LICENSE" "$app/"
# Node resolves a bare import through every node_modules above the importing file: none may exist,
# so that --version below fails if the bundle imports a package.
dir=$app
while :; do
  if [ -e "$dir/node_modules" ]; then
    echo "image-smoke: $dir/node_modules exists; the copy must not see one" >&2
    exit 1
  fi
  [ "$dir" = / ] && break
  dir=$(dirname "$dir")
done

# The runtime image runs as 65532 with a read-only root filesystem and HOME=/tmp.
run=(env -i PATH=/usr/bin:/bin HOME=/tmp NODE_ENV=production)
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  chmod -R a-w "$app"
  run=(setpriv --reuid 65532 --regid 65532 --clear-groups "${run[@]}")
fi

# --version loads the entry and the CLI; the commands' chunks load on use. Every chunk is linked here,
# so an import that only node_modules could satisfy fails now rather than in a cluster.
echo "image-smoke: every chunk of dist/ links" >&2
(cd "$app" && "${run[@]}" "$node24" --input-type=module -e '
  import { readdirSync } from "node:fs";
  import { pathToFileURL } from "node:url";
  for (const file of readdirSync("dist/chunks")) await import(pathToFileURL(`dist/chunks/${file}`).href);
')

echo "image-smoke: node dist/main.js --version" >&2
output=$(cd "$app" && "${run[@]}" "$node24" dist/main.js --version)
if ! grep -qF "$version" <<<"$output"; then
  echo "image-smoke: expected the version $version in the output of --version, got: $output" >&2
  exit 1
fi
if [ -n "$target" ]; then
  cp -a "$app/." "$target/"
fi
echo "image-smoke: ok ($output)" >&2
