#!/usr/bin/env bash
# Reproduces the Dockerfile's runtime stage without a container engine: compiles src/ into a clean
# directory, installs production dependencies from the lockfile the way the `deps` stage does
# (`npm ci --omit=dev --ignore-scripts`), then runs `node dist/main.js --version` on the project's
# Node 24 from that directory, as UID 65532 with read-only application files when run as root.
# Fails when a production dependency is missing, a dev dependency leaks in, or the entrypoint breaks.
#
# Usage: scripts/image-smoke.sh [--dist DIR] [--app-dir DIR]
#   --dist DIR     copy this compiled output (dist/ after `npm run build`) instead of compiling src/
#   --app-dir DIR  install into DIR (created; must be absent or empty) and keep it there, so that a
#                  caller can start the copy (e2e/specs/image.e2e.test.ts). Run as root, the copy is
#                  made read-only and DIR's parents must be traversable by UID 65532.
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

if [ -n "$app" ]; then
  mkdir -p "$app"
  if [ -n "$(ls -A "$app")" ]; then
    echo "image-smoke: --app-dir $app is not empty" >&2
    exit 2
  fi
  app=$(cd "$app" && pwd)
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  chmod 755 "$work"
  app="$work/app"
  mkdir -p "$app"
fi
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
cp "$root/package.json" "$root/package-lock.json" "$root/LICENSE" "$app/"

echo "image-smoke: deps stage (npm ci --omit=dev --ignore-scripts)" >&2
(cd "$app" && "$node24" "$npm_cli" ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
# Packages the lockfile marks as dev-only must not be installed (e.g. typescript, vitest, `node`).
leaked=$(cd "$app" && "$node24" -e '
  const { packages } = require("./package-lock.json");
  const devOnly = Object.entries(packages).filter(([path, entry]) => path && entry.dev === true);
  console.log(devOnly.filter(([path]) => require("node:fs").existsSync(path)).map(([path]) => path).join(" "));
')
rm -f "$app/package-lock.json"
if [ -n "$leaked" ]; then
  echo "image-smoke: dev-only packages in the runtime install: $leaked" >&2
  exit 1
fi

# Type declarations and source maps are never loaded at run time; they are over a third of the
# install (the Dockerfile's deps stage drops the same files).
find "$app/node_modules" -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' \) -delete

# The runtime image runs as 65532 with a read-only root filesystem and HOME=/tmp.
run=(env -i PATH=/usr/bin:/bin HOME=/tmp NODE_ENV=production)
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  chmod -R a-w "$app"
  run=(setpriv --reuid 65532 --regid 65532 --clear-groups "${run[@]}")
fi

echo "image-smoke: every production dependency resolves" >&2
(cd "$app" && "${run[@]}" "$node24" --input-type=module -e '
  import { readFileSync } from "node:fs";
  const { dependencies = {} } = JSON.parse(readFileSync("package.json", "utf8"));
  for (const name of Object.keys(dependencies)) await import(name);
')

echo "image-smoke: node dist/main.js --version" >&2
output=$(cd "$app" && "${run[@]}" "$node24" dist/main.js --version)
if ! grep -qF "$version" <<<"$output"; then
  echo "image-smoke: expected the version $version in the output of --version, got: $output" >&2
  exit 1
fi
echo "image-smoke: ok ($output)" >&2
