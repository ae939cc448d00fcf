#!/usr/bin/env bash
# Builds the kubectl plugin as single-file executables (Node's single-executable applications: the
# Node.js binary of each platform with the plugin injected by postject; no Node.js needed to run
# it) and its krew manifest. Outputs in .cache/plugin/release/ (or $1):
#   kubectl-kreload-<version>-<os>-<arch>.tar.gz   kubectl-kreload and LICENSE, for linux amd64 and arm64
#   kreload.yaml                                  the krew manifest, with each archive's sha256
#   plugin.env                                    PLUGIN_<OS>_<ARCH>=<archive> lines, PLUGIN_MANIFEST
# The archives' URLs in the manifest start with $KRELOAD_RELEASE_URL (default: the GitHub release of
# this version). Archive entries are sorted, owned by 0:0 and dated by the last commit.
# darwin is not built here: macOS runs only signed arm64 code, and re-signing an injected binary
# needs Apple's codesign.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-"$root/.cache/plugin/release"}
node24=$(cd "$root" && npx --no-install node -p process.execPath)
version=$("$node24" -p "require('$root/package.json').version")
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)}
release_url=${KRELOAD_RELEASE_URL:-"https://github.com/kreload/kreload/releases/download/v$version"}
# <os>-<arch> as krew and Go name them, and Node's name of the same platform.
targets=(linux-amd64:linux-x64 linux-arm64:linux-arm64)
sentinel=NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2

mkdir -p "$out"
out=$(cd "$out" && pwd)
work="$out/work"
rm -rf "$work"
mkdir -p "$work/bundle"

echo "plugin: build, then one ES module file and its CommonJS launcher (rolldown.sea.config.ts)" >&2
(cd "$root" && npm run --silent build >&2)
(cd "$root" && KRELOAD_SEA_BUNDLE_DIR="$work/bundle" npx --no-install rolldown -c rolldown.sea.config.ts >&2)
# What the bundle reads its version from (<dir>/package.json beside <dir>/dist/).
"$node24" -e 'const m = require(process.argv[1]); process.stdout.write(JSON.stringify({ name: m.name, version: m.version, type: "module" }) + "\n")' \
  "$root/package.json" >"$work/bundle/package.json"
cat >"$work/sea-config.json" <<JSON
{
  "main": "$work/bundle/launcher.cjs",
  "output": "$work/sea.blob",
  "disableExperimentalSEAWarning": true,
  "useSnapshot": false,
  "useCodeCache": false,
  "assets": {
    "kubectl-kreload.mjs": "$work/bundle/kubectl-kreload.mjs",
    "package.json": "$work/bundle/package.json"
  }
}
JSON
# Without a code cache the blob is the same for every platform of this Node.js version.
"$node24" --experimental-sea-config "$work/sea-config.json" >&2

strip_binary() { # file, node platform
  if command -v llvm-strip >/dev/null; then
    llvm-strip "$1"
  elif [ "$2" = linux-x64 ] && command -v strip >/dev/null; then
    strip "$1"
  else
    echo "plugin: no llvm-strip; $2 keeps Node's debug symbols (about 20 MB more)" >&2
  fi
}

: >"$out/plugin.env"
platforms_yaml=''
for target in "${targets[@]}"; do
  name=${target%%:*}
  node_platform=${target##*:}
  dir="$work/$name"
  mkdir -p "$dir"
  node=$(bash "$root/scripts/node-dist.sh" "$node_platform")
  echo "plugin: $name from $node" >&2
  cp "$node" "$dir/kubectl-kreload"
  chmod 755 "$dir/kubectl-kreload"
  strip_binary "$dir/kubectl-kreload" "$node_platform"
  (cd "$root" && npx --no-install postject "$dir/kubectl-kreload" NODE_SEA_BLOB "$work/sea.blob" \
    --sentinel-fuse "$sentinel" >/dev/null 2>&1) || {
    echo "plugin: postject failed for $name" >&2
    exit 1
  }
  cp "$root/LICENSE" "$dir/LICENSE"
  chmod 644 "$dir/LICENSE"
  touch -d "@$epoch" "$dir/kubectl-kreload" "$dir/LICENSE"
  archive="kubectl-kreload-$version-$name.tar.gz"
  tar --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner -C "$dir" \
    -cf - kubectl-kreload LICENSE | gzip -n -9 >"$out/$archive"
  sum=$(sha256sum "$out/$archive" | cut -d' ' -f1)
  upper=$(tr 'a-z-' 'A-Z_' <<<"$name")
  printf 'PLUGIN_%s=%s\n' "$upper" "$out/$archive" >>"$out/plugin.env"
  platforms_yaml+="    - selector:
        matchLabels:
          os: ${name%%-*}
          arch: ${name##*-}
      uri: $release_url/$archive
      sha256: $sum
      bin: kubectl-kreload
      files:
        - from: kubectl-kreload
          to: .
        - from: LICENSE
          to: .
"
done

cat >"$out/kreload.yaml" <<YAML
apiVersion: krew.googlecontainertools.github.com/v1alpha2
kind: Plugin
metadata:
  name: kreload
spec:
  version: v$version
  homepage: https://github.com/kreload/kreload
  shortDescription: Explain why a workload did or did not reload
  description: |
    kreload rolls workloads when the ConfigMaps, Secrets and CSI secrets they use change (a
    drop-in replacement for stakater/Reloader). The plugin is its read-only side: explain says why
    a workload did or did not roll on a change and what the next change will do; history lists a
    workload's revisions with the config snapshots each runs; hash prints the hashes kreload
    writes. It reads with your kubeconfig and needs no Node.js.
  caveats: |
    kubectl kreload explain deployment <name> -n <namespace>
    kubectl kreload history deployment <name> -n <namespace>
  platforms:
$platforms_yaml
YAML
# The trailing blank line of the last platform.
sed -i -e '${/^$/d}' "$out/kreload.yaml"
printf 'PLUGIN_MANIFEST=%s\n' "$out/kreload.yaml" >>"$out/plugin.env"
rm -rf "$work"
ls -l "$out" >&2
