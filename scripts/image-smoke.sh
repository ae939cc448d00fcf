#!/usr/bin/env bash
# Reproduces the Dockerfile's runtime stage without a container engine: compiles src/ into a clean
# directory, installs production dependencies from the lockfile the way the `deps` stage does
# (`npm ci --omit=dev --ignore-scripts`), then runs `node dist/main.js --version` on the project's
# Node 24 from that directory, as UID 65532 with read-only application files when run as root.
# Fails when a production dependency is missing, a dev dependency leaks in, or the entrypoint breaks.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
node24=$(cd "$root" && npx --no-install node -p process.execPath)
npm_cli=$(readlink -f "$(command -v npm)")
version=$("$node24" -p "require('$root/package.json').version")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
app="$work/app"
mkdir -p "$app"

echo "image-smoke: build stage (tsc -p tsconfig.build.json)" >&2
(cd "$root" && npx --no-install tsc -p tsconfig.build.json --outDir "$app/dist")
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
