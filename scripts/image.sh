#!/usr/bin/env bash
# `npm run image`: builds the kreload container image for linux/amd64 and linux/arm64 without a
# container engine, as one OCI image index. Each image is the Dockerfile's runtime stage
# (docs/adr/0025-image-build-and-values-compatibility.md): a distroless-style root made of Debian
# bookworm's libc6, libgcc-s1, libstdc++6 and ca-certificates for that architecture, the project's
# Node 24 for that architecture (the `node` devDependency's binary, from npm's node-linux-<arch>
# package for the other one; stripped) at /usr/local/bin/node, and /app with the rolldown bundle
# dist/ (which imports only Node's built-ins), package.json and LICENSE, and no node_modules
# (scripts/image-smoke.sh copies and checks them). It runs as 65532:65532 and needs nothing writable
# but /tmp. Two builds of one commit give the same digests.
#
# Usage: scripts/image.sh [OUT] [--compression gzip|zstd] [--push REGISTRY/REPOSITORY:TAG] [--plain-http]
#   OUT          the output folder (default .cache/image)
#   --compression  the OCI layers' encoding: zstd (the default; level 19, four workers, with the zstd
#                and libzstd1 of the Debian suite the base comes from, fetched and verified by apt
#                like the base packages, so the bytes do not depend on the host's zstd) or gzip
#                (umoci's own). zstd layers need containerd >= 1.5 or CRI-O >= 1.21
#                (docs/getting-started.md); gzip is read by every runtime. The docker load archives
#                hold uncompressed layers either way, which every Docker version loads.
#   --push       then pushes the index, its images and their blobs to a registry (distribution API,
#                no credentials; plain HTTP for localhost and 127.0.0.1, or with --plain-http)
#
# Needs: apt-get (Debian's repository; its package lists for both architectures are kept in
# .cache/apt and refreshed when older than a day), dpkg-deb, umoci, tar, gzip, readelf, and strip
# (binutils) plus llvm-strip or aarch64-linux-gnu-strip for arm64 (both optional). Outputs in OUT:
#   kreload-<version>.oci.tar                          the OCI archive of the index (podman load,
#                                                      skopeo, kind load image-archive, k3d image import)
#   layout/                                            the same as an OCI layout directory: tag
#                                                      <version> is the index, <version>-<arch> each image
#   kreload-<version>-linux-<arch>.docker.tar.gz       each image as a `docker load` archive
#   kreload-<version>-linux-<arch>.sbom.cdx.json       each image's SBOM (CycloneDX JSON)
#   image.env                                          the paths, tags, digest and sizes in bytes
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: $0 [OUT] [--compression gzip|zstd] [--push REGISTRY/REPOSITORY:TAG] [--plain-http]"
out=''
push=''
compression=zstd
plain_http=()
while [ $# -gt 0 ]; do
  case $1 in
    --push)
      [ $# -ge 2 ] && [ -n "$2" ] || { echo "image: --push needs REGISTRY/REPOSITORY:TAG; $usage" >&2; exit 2; }
      push=$2
      shift 2
      ;;
    --plain-http) plain_http=(--plain-http); shift ;;
    --compression)
      case ${2:-} in gzip | zstd) compression=$2 ;; *) echo "image: --compression is gzip or zstd; $usage" >&2; exit 2 ;; esac
      shift 2
      ;;
    -*) echo "image: unknown option $1; $usage" >&2; exit 2 ;;
    *)
      [ -z "$out" ] || { echo "image: one output folder only; $usage" >&2; exit 2; }
      out=$1
      shift
      ;;
  esac
done
out=${out:-"$root/.cache/image"}
# Each tool the build runs and the Debian package that has it.
for row in apt-get:apt dpkg-deb:dpkg umoci:umoci tar:tar gzip:gzip readelf:binutils; do
  command -v "${row%%:*}" >/dev/null || {
    echo "image: ${row%%:*} is required (Debian or Ubuntu: apt-get install -y ${row#*:}; see docs/getting-started.md)" >&2
    exit 1
  }
done
node24=$(cd "$root" && npx --no-install node -p process.execPath)
version=$("$node24" -p "require('$root/package.json').version")
revision=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
# Reproducible timestamps: the last commit's time, as SOURCE_DATE_EPOCH would give it.
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)}
created=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)
name="docker.io/library/kreload"
ref="$name:$version"
# The base packages of gcr.io/distroless/cc-debian12, which the Dockerfile's runtime stage uses: one
# build per architecture, and ca-certificates, which is the same for all (Architecture: all).
arch_packages=(libc6 libgcc-s1 libstdc++6)
packages=("${arch_packages[@]}" ca-certificates)
# One row per architecture, the first the default of clients that pick none: the OCI (and Debian)
# name, Node's npm platform, the GNU triplet of the library folders, the dynamic loader, and the ELF
# machine readelf names.
architectures=(amd64 arm64)
arch_row() {
  case $1 in
    amd64) echo "linux-x64 x86_64-linux-gnu lib64/ld-linux-x86-64.so.2 X86-64" ;;
    arm64) echo "linux-arm64 aarch64-linux-gnu lib/ld-linux-aarch64.so.1 AArch64" ;;
    *) echo "image: no row for the architecture $1" >&2; return 1 ;;
  esac
}
host_arch=$(dpkg --print-architecture)

mkdir -p "$out"
out=$(cd "$out" && pwd)
work="$out/work"
rm -rf "$work" "$out/layout" "$out"/kreload-*.docker.tar.gz "$out"/kreload-*.sbom.cdx.json
mkdir -p "$work"
chmod 755 "$out" "$work"

# Debian's package lists for every architecture, apart from the host's own apt state (which knows
# only its architecture), from the host's sources (deb.debian.org).
apt_dir="$root/.cache/apt"
apt_options=(-o APT::Sandbox::User=root -o Dir::State="$apt_dir/state"
  -o Dir::State::status="$apt_dir/status" -o Dir::Cache="$apt_dir/cache"
  -o APT::Architecture="$host_arch" -o APT::Architectures="$(IFS=,; echo "${architectures[*]}")")
apt=(apt-get -q "${apt_options[@]}")
mkdir -p "$apt_dir/state/lists/partial" "$apt_dir/cache/archives/partial"
touch "$apt_dir/status"
if [ -z "$(find "$apt_dir/state/updated" -mmin -1440 2>/dev/null)" ]; then
  echo "image: Debian package lists for ${architectures[*]} (apt-get update into $apt_dir)" >&2
  "${apt[@]}" update >&2
  touch "$apt_dir/state/updated"
fi

zstd=''
zstd_version=''
if [ "$compression" = zstd ]; then
  # The zstd CLI and its libzstd from the same Debian suite as the base, for the host (apt checks
  # them against the suite's signed Release file), unpacked into .cache/apt/zstd/<version>: the
  # compressed bytes, and so the digests, depend on libzstd's version, not on what the host has.
  zstd_version=$(apt-cache "${apt_options[@]}" show --no-all-versions "libzstd1:$host_arch" 2>/dev/null |
    awk '$1 == "Version:" { print $2; exit }')
  [ -n "$zstd_version" ] || { echo "image: Debian's package lists have no libzstd1:$host_arch" >&2; exit 1; }
  zstd_dir="$apt_dir/zstd/$zstd_version"
  zstd="$zstd_dir/zstd"
  if [ ! -x "$zstd" ]; then
    echo "image: zstd $zstd_version from Debian's repository (zstd, libzstd1)" >&2
    rm -rf "$zstd_dir" && mkdir -p "$zstd_dir/debs"
    (cd "$zstd_dir/debs" && "${apt[@]}" download "zstd:$host_arch" "libzstd1:$host_arch" >&2)
    for deb in "$zstd_dir"/debs/*.deb; do dpkg-deb -x "$deb" "$zstd_dir/root"; done
    lib=$(dirname "$(find "$zstd_dir/root" -name 'libzstd.so.1*' -print -quit)")
    printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' "$lib" "$zstd_dir/root/usr/bin/zstd" >"$zstd.tmp"
    chmod 755 "$zstd.tmp"
    "$zstd.tmp" -q -c </dev/null >/dev/null || { echo "image: Debian's zstd $zstd_version does not run here" >&2; exit 1; }
    mv "$zstd.tmp" "$zstd"
  fi
fi

echo "image: app (scripts/image-smoke.sh: build, the bundle without node_modules, --version as 65532)" >&2
mkdir -p "$work/app"
chmod 755 "$work/app"
bash "$root/scripts/image-smoke.sh" --app-dir "$work/app/app"

echo "image: SBOM inputs (cyclonedx-npm's packages, the bundle's source maps)" >&2
(cd "$root" && npx --no-install cyclonedx-npm --omit dev --output-reproducible --output-format JSON \
  --output-file "$work/npm.cdx.json" >&2)
# The same bundle again, with source maps: their sources name the npm packages /app/dist holds code of.
(cd "$root" && npx --no-install rolldown -c rolldown.config.ts --sourcemap --dir "$work/sourcemaps" >/dev/null)
if ! diff <(cd "$work/sourcemaps" && find . -name '*.js' ! -name kubectl-kreload.js | sort) \
  <(cd "$work/app/app/dist" && find . -name '*.js' | sort) >&2; then
  echo "image: the source-mapped bundle differs from /app/dist" >&2
  exit 1
fi

echo "image: OCI layout (umoci)" >&2
layout="$out/layout"
umoci init --layout "$layout"

# Strips the debug symbols (about 18 MB) off the node binary for machine $2.
strip_node() {
  local file=$1 machine=$2 tool
  case $machine in
    X86-64) tool=$(command -v strip || command -v llvm-strip || true) ;;
    AArch64) tool=$(command -v aarch64-linux-gnu-strip || command -v llvm-strip || true) ;;
  esac
  if [ -n "$tool" ]; then
    "$tool" "$file"
  else
    echo "image: no strip for $machine (binutils, llvm); node keeps its debug symbols" >&2
  fi
}

# A dpkg status paragraph: the package's control fields with the status dpkg would record.
status_of() { dpkg-deb -f "$1" | awk 'NR == 1 { print; print "Status: install ok installed"; next } { print }'; }

# Builds the image for one architecture into the layout, tagged <version>-<arch>.
build_image() {
  local arch=$1 node_platform triplet loader machine
  read -r node_platform triplet loader machine < <(arch_row "$arch")
  local dir="$work/$arch"
  local rootfs="$dir/rootfs" debs="$dir/debs" node_bin
  mkdir -p "$rootfs" "$debs" "$dir/base-files"
  chmod 755 "$dir" "$rootfs"

  echo "image: $arch base (${packages[*]} from Debian's repository)" >&2
  (cd "$debs" && "${apt[@]}" download "${arch_packages[@]/%/:$arch}" ca-certificates >&2)
  (cd "$dir/base-files" && "${apt[@]}" download "base-files:$arch" >&2)
  for deb in "$debs"/*.deb; do
    dpkg-deb -x "$deb" "$rootfs"
  done
  # What scanners (syft, trivy, grype) read to see the Debian packages the image holds files of, in
  # distroless's layout: a control paragraph per package in /var/lib/dpkg/status.d/ (there is no
  # dpkg database), and /etc/os-release from Debian's base-files.
  mkdir -p "$rootfs/var/lib/dpkg/status.d"
  for deb in "$debs"/*.deb "$dir"/base-files/*.deb; do
    status_of "$deb" >"$rootfs/var/lib/dpkg/status.d/$(dpkg-deb -f "$deb" Package)"
  done
  dpkg-deb --fsys-tarfile "$dir"/base-files/base-files_*.deb |
    tar -x -C "$rootfs" ./usr/lib/os-release ./etc/os-release
  # Documentation, locales and iconv modules: Node bundles ICU and never loads them.
  rm -rf "$rootfs"/usr/share/{doc,man,info,lintian,locale,gcc} \
    "$rootfs/usr/lib/$triplet/gconv" "$rootfs/lib/$triplet/gconv"
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
  [ -e "$rootfs/$loader" ] || { echo "image: $arch: libc6 gave no $loader" >&2; return 1; }

  node_bin=$(bash "$root/scripts/node-dist.sh" "$node_platform")
  echo "image: $arch node $("$node24" --version) ($node_bin) -> /usr/local/bin/node" >&2
  cp "$node_bin" "$rootfs/usr/local/bin/node"
  chmod 755 "$rootfs/usr/local/bin/node"
  strip_node "$rootfs/usr/local/bin/node" "$machine"
  if [ -f "$(dirname "$node_bin")/../LICENSE" ]; then
    cp "$(dirname "$node_bin")/../LICENSE" "$rootfs/usr/local/share/doc/node/LICENSE"
  fi
  if ! readelf -h "$rootfs/usr/local/bin/node" | grep -q "Machine:.*$machine"; then
    echo "image: $arch: /usr/local/bin/node is not an ELF for $machine" >&2
    return 1
  fi
  if [ "$arch" = "$host_arch" ]; then
    # The runtime check of the base: the image's node loads with only the image's libraries.
    "$rootfs/$loader" --library-path "$rootfs/lib/$triplet:$rootfs/usr/lib/$triplet" \
      "$rootfs/usr/local/bin/node" --version >/dev/null
  fi

  echo "image: $arch SBOM" >&2
  "$node24" "$root/scripts/sbom.ts" "$work/npm.cdx.json" "$work/sourcemaps" "$rootfs" \
    "$("$node24" -p process.versions.node)" "$arch" "$out/kreload-$version-linux-$arch.sbom.cdx.json"

  echo "image: $arch layers" >&2
  local tag="$version-$arch" bundle="$dir/bundle" staged="$dir/staged"
  umoci new --image "$layout:$tag"
  umoci unpack --image "$layout:$tag" "$bundle" >/dev/null
  rmdir "$bundle/rootfs"
  # Three layers, so an upgrade pulls only what changed: the Debian base, Node.js, then kreload
  # (/app, the same bytes and so the same blob for every architecture).
  mkdir -p "$staged"
  mv "$rootfs/usr/local/bin/node" "$staged/node"
  mv "$rootfs/usr/local/share/doc/node" "$staged/node-doc"
  mv "$rootfs" "$bundle/rootfs"
  layer() { # tag, bundle, what the layer holds
    find "$2/rootfs" -exec touch -h -d "@$epoch" {} +
    umoci repack --refresh-bundle --image "$layout:$1" --history.created "$created" \
      --history.created_by "scripts/image.sh: $3" "$2"
  }
  layer "$tag" "$bundle" "Debian ${packages[*]}, CA bundle, passwd"
  mv "$staged/node" "$bundle/rootfs/usr/local/bin/node"
  mv "$staged/node-doc" "$bundle/rootfs/usr/local/share/doc/node"
  layer "$tag" "$bundle" "Node.js $("$node24" --version)"
  cp -a "$work/app/app" "$bundle/rootfs/app"
  layer "$tag" "$bundle" "kreload $version (/app)"
  du -sb "$bundle/rootfs" | cut -f1 >"$dir/rootfs-bytes"
  umoci config --image "$layout:$tag" --created "$created" --history.created "$created" \
    --history.created_by "scripts/image.sh config" \
    --os linux --architecture "$arch" \
    --config.user 65532:65532 \
    --config.workingdir /app \
    --config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --config.env NODE_ENV=production --config.env HOME=/tmp \
    --config.entrypoint node --config.entrypoint dist/main.js \
    --config.exposedports 9090/tcp "${labels[@]}"
  rm -rf "$bundle" "$staged"
}

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
find "$work/app" -exec touch -h -d "@$epoch" {} +
arch_tags=()
for arch in "${architectures[@]}"; do
  build_image "$arch"
  if [ "$compression" = zstd ]; then
    echo "image: $arch layers as zstd -19 ($zstd_version)" >&2
    "$node24" "$root/scripts/oci-layout.ts" zstd "$layout" "$version-$arch" 19 "$zstd" >/dev/null
  fi
  arch_tags+=("$arch=$version-$arch")
done
umoci gc --layout "$layout"

echo "image: OCI index (${architectures[*]})" >&2
# containerd (kind, k3d) names an imported image after io.containerd.image.name; the OCI ref name
# stays the tag, which umoci and skopeo address as <layout>:<tag>.
digest=$("$node24" "$root/scripts/oci-layout.ts" index "$layout" "$version" "$ref" "${arch_tags[@]}")

archive="$out/kreload-$version.oci.tar"
tar --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner -C "$layout" -cf "$archive" .
{
  echo "IMAGE_ARCHIVE=$archive"
  echo "IMAGE_LAYOUT=$layout"
  echo "IMAGE_TAG=$version"
  echo "IMAGE_REF=$ref"
  echo "IMAGE_DIGEST=$digest"
  echo "IMAGE_COMPRESSED_BYTES=$(stat -c %s "$archive")"
  echo "IMAGE_ARCHITECTURES=${architectures[*]}"
  echo "IMAGE_COMPRESSION=$compression${zstd_version:+ $zstd_version}"
} >"$work/image.env"
for arch in "${architectures[@]}"; do
  echo "image: $arch docker load archive" >&2
  docker_dir="$work/$arch/docker"
  docker_archive="$out/kreload-$version-linux-$arch.docker.tar.gz"
  "$node24" "$root/scripts/oci-layout.ts" docker-archive "$layout" "$version-$arch" "kreload:$version" "$docker_dir"
  (cd "$docker_dir" && find . -exec touch -h -d "@$epoch" {} + &&
    tar --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner -cf - -- * | gzip -n -6 >"$docker_archive")
  rm -rf "$docker_dir"
  upper=${arch^^}
  {
    echo "IMAGE_${upper}_TAG=$version-$arch"
    echo "IMAGE_${upper}_DOCKER_ARCHIVE=$docker_archive"
    echo "IMAGE_${upper}_SBOM=$out/kreload-$version-linux-$arch.sbom.cdx.json"
    echo "IMAGE_${upper}_ROOTFS_BYTES=$(cat "$work/$arch/rootfs-bytes")"
    # What a pull of this architecture transfers: its layer blobs (compressed).
    echo "IMAGE_${upper}_COMPRESSED_BYTES=$("$node24" -e '
      const fs = require("node:fs");
      const [layout, tag] = process.argv.slice(1);
      const blob = (digest) => JSON.parse(fs.readFileSync(`${layout}/blobs/${digest.replace(":", "/")}`, "utf8"));
      const entry = JSON.parse(fs.readFileSync(`${layout}/index.json`, "utf8")).manifests
        .find((m) => m.annotations["org.opencontainers.image.ref.name"] === tag);
      console.log(blob(entry.digest).layers.reduce((sum, layer) => sum + layer.size, 0));
    ' "$layout" "$version-$arch")"
  } >>"$work/image.env"
done
mv "$work/image.env" "$out/image.env"
rm -rf "$work"
echo "image: $ref@$digest (${architectures[*]}) -> $archive ($(($(stat -c %s "$archive") / 1000000)) MB)" >&2
if [ -n "$push" ]; then
  echo "image: push $push" >&2
  pushed=$("$node24" "$root/scripts/oci-layout.ts" push "$layout" "$version" "$push" "${plain_http[@]}")
  echo "IMAGE_PUSHED=$pushed" >>"$out/image.env"
  echo "image: pushed $pushed" >&2
fi
echo "$archive"
