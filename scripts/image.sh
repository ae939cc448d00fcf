#!/usr/bin/env bash
# `npm run image`: builds the kreload container image without a container engine and writes it as an
# OCI image archive. The image is the Dockerfile's runtime stage (docs/adr/0025-image-build-and-values-compatibility.md):
# a distroless-style root made of Debian bookworm's libc6, libgcc-s1, libstdc++6 and ca-certificates,
# the project's Node 24 (the `node` devDependency, stripped) at /usr/local/bin/node, and /app with
# the rolldown bundle dist/ (which imports only Node's built-ins), package.json and LICENSE, and no
# node_modules (scripts/image-smoke.sh copies and checks them). It runs as 65532:65532 and needs
# nothing writable but /tmp.
#
# Needs: apt-get (Debian's package lists: run `apt-get update` once), dpkg-deb, umoci, tar, and
# strip (binutils; optional). Outputs in .cache/image/ (or $1):
#   kreload-<version>.oci.tar   the OCI archive (podman load, skopeo, kind load image-archive, k3d image import)
#   layout/                     the same image as an OCI layout directory (umoci, skopeo oci:)
#   image.env                   IMAGE_ARCHIVE, IMAGE_REF, IMAGE_LAYOUT, IMAGE_TAG, sizes in bytes
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-"$root/.cache/image"}
for tool in apt-get dpkg-deb umoci tar; do
  command -v "$tool" >/dev/null || {
    echo "image: $tool is required (Debian: apt-get install -y umoci; see docs/getting-started.md)" >&2
    exit 1
  }
done
node24=$(cd "$root" && npx --no-install node -p process.execPath)
version=$("$node24" -p "require('$root/package.json').version")
revision=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
# Reproducible timestamps: the last commit's time, as SOURCE_DATE_EPOCH would give it.
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)}
created=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)
ref="docker.io/library/kreload:$version"
# The base packages of gcr.io/distroless/cc-debian12, which the Dockerfile's runtime stage uses.
packages=(libc6 libgcc-s1 libstdc++6 ca-certificates)

mkdir -p "$out"
out=$(cd "$out" && pwd)
work="$out/work"
rm -rf "$work" "$out/layout"
mkdir -p "$work/debs"
chmod 755 "$out" "$work"
rootfs="$work/rootfs"
mkdir -p "$rootfs"
chmod 755 "$rootfs"

echo "image: app (scripts/image-smoke.sh: build, the bundle without node_modules, --version as 65532)" >&2
bash "$root/scripts/image-smoke.sh" --app-dir "$rootfs/app"

echo "image: base (${packages[*]} from Debian's package lists)" >&2
(cd "$work/debs" && apt-get -o APT::Sandbox::User=root download "${packages[@]}" >&2)
for deb in "$work"/debs/*.deb; do
  dpkg-deb -x "$deb" "$rootfs"
done
# What scanners (syft, trivy, grype) read to see the Debian packages the image holds files of, in
# distroless's layout: a control paragraph per package in /var/lib/dpkg/status.d/ (there is no dpkg
# database), and /etc/os-release from Debian's base-files.
mkdir -p "$rootfs/var/lib/dpkg/status.d" "$work/base-files"
for deb in "$work"/debs/*.deb; do
  name=$(dpkg-deb -f "$deb" Package)
  dpkg-deb -f "$deb" | awk 'NR == 1 { print; print "Status: install ok installed"; next } { print }' \
    >"$rootfs/var/lib/dpkg/status.d/$name"
done
(cd "$work/base-files" && apt-get -o APT::Sandbox::User=root download base-files >&2)
dpkg-deb --fsys-tarfile "$work"/base-files/base-files_*.deb |
  tar -x -C "$rootfs" ./usr/lib/os-release ./etc/os-release
dpkg-deb -f "$work"/base-files/base-files_*.deb |
  awk 'NR == 1 { print; print "Status: install ok installed"; next } { print }' \
  >"$rootfs/var/lib/dpkg/status.d/base-files"
# Documentation, locales and iconv modules: Node bundles ICU and never loads them.
rm -rf "$rootfs"/usr/share/{doc,man,info,lintian,locale,gcc} "$rootfs"/usr/lib/x86_64-linux-gnu/gconv \
  "$rootfs"/usr/lib/x86_64-linux-gnu/gconv "$rootfs"/lib/x86_64-linux-gnu/gconv
mkdir -p "$rootfs/etc/ssl/certs"
# What update-ca-certificates would write; Node itself uses its bundled store unless told otherwise.
cat "$rootfs"/usr/share/ca-certificates/mozilla/*.crt >"$rootfs/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' \
  >"$rootfs/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$rootfs/etc/group"
printf 'hosts: files dns\n' >"$rootfs/etc/nsswitch.conf"
# Mount points a container runtime fills (procfs, devices, sysfs).
mkdir -p "$rootfs/proc" "$rootfs/dev" "$rootfs/sys"
mkdir -p "$rootfs/tmp" "$rootfs/home/nonroot" "$rootfs/root" "$rootfs/usr/local/bin" \
  "$rootfs/usr/local/share/doc/node"
chmod 1777 "$rootfs/tmp"
chmod 700 "$rootfs/root"
chown 65532:65532 "$rootfs/home/nonroot" 2>/dev/null || true

echo "image: node $("$node24" --version) -> /usr/local/bin/node" >&2
cp "$(readlink -f "$node24")" "$rootfs/usr/local/bin/node"
if command -v strip >/dev/null; then
  strip "$rootfs/usr/local/bin/node"
else
  echo "image: strip not found; the node binary keeps its debug symbols (about 18 MB more)" >&2
fi
node_license=$(dirname "$(readlink -f "$node24")")/../LICENSE
[ -f "$node_license" ] && cp "$node_license" "$rootfs/usr/local/share/doc/node/LICENSE"
# The runtime check of the base: the image's node loads with only the image's libraries.
"$rootfs/lib64/ld-linux-x86-64.so.2" --library-path "$rootfs/lib/x86_64-linux-gnu:$rootfs/usr/lib/x86_64-linux-gnu" \
  "$rootfs/usr/local/bin/node" --version >/dev/null

echo "image: SBOM (cyclonedx-npm's packages the bundle holds code of, the Debian packages, Node.js)" >&2
sbom="$out/kreload-$version.sbom.cdx.json"
(cd "$root" && npx --no-install cyclonedx-npm --omit dev --output-reproducible --output-format JSON \
  --output-file "$work/npm.cdx.json" >&2)
# The same bundle again, with source maps: their sources name the npm packages /app/dist holds code of.
(cd "$root" && npx --no-install rolldown -c rolldown.config.ts --sourcemap --dir "$work/sourcemaps" >/dev/null)
if ! diff <(cd "$work/sourcemaps" && find . -name '*.js' ! -name kubectl-kreload.js | sort) \
  <(cd "$rootfs/app/dist" && find . -name '*.js' | sort) >&2; then
  echo "image: the source-mapped bundle differs from /app/dist" >&2
  exit 1
fi
"$node24" "$root/scripts/sbom.ts" "$work/npm.cdx.json" "$work/sourcemaps" "$rootfs" \
  "$("$node24" -p process.versions.node)" amd64 "$sbom"

find "$rootfs" -exec touch -h -d "@$epoch" {} +

echo "image: OCI layout (umoci)" >&2
layout="$out/layout"
umoci init --layout "$layout"
umoci new --image "$layout:$version"
bundle="$work/bundle"
umoci unpack --image "$layout:$version" "$bundle" >/dev/null
rmdir "$bundle/rootfs"
# Three layers, so an upgrade pulls only what changed: the Debian base, Node.js, then kreload (/app).
staged="$work/staged"
mkdir -p "$staged"
mv "$rootfs/app" "$staged/app"
mv "$rootfs/usr/local/bin/node" "$staged/node"
mv "$rootfs/usr/local/share/doc/node" "$staged/node-doc"
mv "$rootfs" "$bundle/rootfs"
layer() { # what the layer holds
  find "$bundle/rootfs" -exec touch -h -d "@$epoch" {} +
  umoci repack --refresh-bundle --image "$layout:$version" --history.created "$created" \
    --history.created_by "scripts/image.sh: $1" "$bundle"
}
layer "Debian ${packages[*]}, CA bundle, passwd"
mv "$staged/node" "$bundle/rootfs/usr/local/bin/node"
mv "$staged/node-doc" "$bundle/rootfs/usr/local/share/doc/node"
layer "Node.js $("$node24" --version)"
mv "$staged/app" "$bundle/rootfs/app"
layer "kreload $version (/app)"
label() { printf -- '--config.label=org.opencontainers.image.%s=%s\n' "$1" "$2"; }
mapfile -t labels < <(
  label title kreload
  label description "Rolls Kubernetes workloads when the ConfigMaps, Secrets and CSI secrets they use change; a drop-in replacement for stakater/Reloader"
  label licenses Apache-2.0
  label version "$version"
  label revision "$revision"
  label created "$created"
  label base.name "debian:bookworm (${packages[*]})"
)
umoci config --image "$layout:$version" --created "$created" --history.created "$created" \
  --history.created_by "scripts/image.sh config" \
  --config.user 65532:65532 \
  --config.workingdir /app \
  --config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --config.env NODE_ENV=production --config.env HOME=/tmp \
  --config.entrypoint node --config.entrypoint dist/main.js \
  --config.exposedports 9090/tcp "${labels[@]}"
umoci gc --layout "$layout"
# containerd (kind, k3d) names an imported image after io.containerd.image.name; the OCI ref name
# stays the tag, which umoci and skopeo address as <layout>:<tag>.
"$node24" -e '
  const fs = require("node:fs");
  const [file, ref] = process.argv.slice(1);
  const index = JSON.parse(fs.readFileSync(file, "utf8"));
  for (const manifest of index.manifests) {
    manifest.annotations = { ...manifest.annotations, "io.containerd.image.name": ref };
  }
  fs.writeFileSync(file, JSON.stringify(index));
' "$layout/index.json" "$ref"

archive="$out/kreload-$version.oci.tar"
tar --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner -C "$layout" -cf "$archive" .
compressed=$(stat -c %s "$archive")
uncompressed=$(du -sb "$bundle/rootfs" | cut -f1)
rm -rf "$work"
cat >"$out/image.env" <<ENV
IMAGE_ARCHIVE=$archive
IMAGE_LAYOUT=$layout
IMAGE_TAG=$version
IMAGE_REF=$ref
IMAGE_COMPRESSED_BYTES=$compressed
IMAGE_ROOTFS_BYTES=$uncompressed
IMAGE_SBOM=$sbom
ENV
echo "image: $ref -> $archive ($((compressed / 1000000)) MB compressed, $((uncompressed / 1000000)) MB unpacked)" >&2
echo "$archive"
