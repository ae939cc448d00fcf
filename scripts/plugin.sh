#!/usr/bin/env bash
# Builds the kubectl plugin as single-file executables (Node's single-executable applications: the
# Node.js binary of each platform with the plugin injected by postject; no Node.js needed to run
# it) and its krew manifest. Outputs in .cache/plugin/release/ (or $1):
#   kubectl-kreload-<version>-<os>-<arch>.tar.gz   kubectl-kreload and LICENSE, for linux and darwin,
#                                                 amd64 and arm64
#   kreload.yaml                                  the krew manifest, with each archive's sha256
#   plugin.env                                    PLUGIN_<OS>_<ARCH>=<archive> lines, PLUGIN_MANIFEST
# The archives' URLs in the manifest start with $KRELOAD_RELEASE_URL (default: the GitHub release of
# this version). Archive entries are sorted, owned by 0:0 and dated by the last commit.
# The darwin executables get an ad-hoc signature (scripts/quill.sh): injecting the plugin breaks the
# signature Node.js ships with, and macOS on arm64 runs no unsigned code.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-"$root/.cache/plugin/release"}
node24=$(cd "$root" && npx --no-install node -p process.execPath)
version=$("$node24" -p "require('$root/package.json').version")
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)}
release_url=${KRELOAD_RELEASE_URL:-"https://github.com/kreload/kreload/releases/download/v$version"}
# The Node.js every executable carries. npm's packages of Node.js for darwin skip versions (for
# darwin-arm64 it has no 24.x from 24.11 on), so this is the newest version npm has for all four
# platforms; the plugin e2e runs the linux executable, the same Node.js and blob the darwin ones carry.
plugin_node=26.10.0
# <os>-<arch> as krew and Go name them, and Node's name of the same platform.
targets=(linux-amd64:linux-x64 linux-arm64:linux-arm64 darwin-amd64:darwin-x64 darwin-arm64:darwin-arm64)
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
  "execArgv": ["--disable-warning=ExperimentalWarning"],
  "useSnapshot": false,
  "useCodeCache": false,
  "assets": {
    "kubectl-kreload.mjs": "$work/bundle/kubectl-kreload.mjs",
    "package.json": "$work/bundle/package.json"
  }
}
JSON
# The blob must come from the Node.js version it is injected into; without a code cache or a
# snapshot it is the same for every platform of that version, so the host's Node.js writes it.
host=$("$node24" -p 'process.platform + "-" + process.arch')
"$(bash "$root/scripts/node-dist.sh" "$host" "$plugin_node")" --experimental-sea-config "$work/sea-config.json" >&2
quill=$(bash "$root/scripts/quill.sh" | tail -n 1)

strip_binary() { # file, node platform
  if [ "${2%%-*}" = darwin ]; then
    : # Node.js for macOS comes without debug symbols; its signature is written again after postject.
  elif command -v llvm-strip >/dev/null; then
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
  node=$(bash "$root/scripts/node-dist.sh" "$node_platform" "$plugin_node")
  echo "plugin: $name from $node" >&2
  cp "$node" "$dir/kubectl-kreload"
  chmod 755 "$dir/kubectl-kreload"
  strip_binary "$dir/kubectl-kreload" "$node_platform"
  macho=()
  [ "${name%%-*}" != darwin ] || macho=(--macho-segment-name NODE_SEA)
  (cd "$root" && npx --no-install postject "$dir/kubectl-kreload" NODE_SEA_BLOB "$work/sea.blob" \
    --sentinel-fuse "$sentinel" "${macho[@]}" >/dev/null 2>&1) || {
    echo "plugin: postject failed for $name" >&2
    exit 1
  }
  if [ "${name%%-*}" = darwin ]; then
    "$quill" sign --ad-hoc --identity kubectl-kreload "$dir/kubectl-kreload" >"$work/quill.log" 2>&1 || {
      echo "plugin: quill could not sign $name:" >&2
      cat "$work/quill.log" >&2
      exit 1
    }
  fi
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
