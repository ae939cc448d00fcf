#!/usr/bin/env bash
# Runs the kreload image from the OCI layout `npm run image` writes, unpacked with `umoci unpack`,
# the way a container runtime would, for sandboxes where podman and crun cannot start containers: its
# entrypoint in its working directory as its user, on a read-only root with a tmpfs /tmp, as PID 1
# of its own PID namespace, with only the environment given here. Network and hostname are the
# host's (the test control plane listens on loopback). Needs root, util-linux unshare and mount.
#
# Usage: scripts/image-run.sh --image LAYOUT:TAG --bundle DIR [--secret DIR:MOUNTPOINT]...
#                            [--env NAME=VALUE]... -- ARG...
#   --image        the OCI layout and tag: its image config gives entrypoint, user, WORKDIR and ENV
#   --bundle DIR   `umoci unpack --image LAYOUT:TAG DIR` of that image (DIR/rootfs is used); its
#                  layers are zstd by default, which needs umoci 0.5 or later (scripts/umoci.sh)
#   --secret       bind-mounts a host directory read-only, e.g. a ServiceAccount token directory at
#                  /var/run/secrets/kubernetes.io/serviceaccount, as the kubelet does
#   --env          added to the image's own environment
#   ARG...         appended to the image's entrypoint, as a pod's `args`
set -euo pipefail
usage="usage: $0 --image LAYOUT:TAG --bundle DIR [--secret DIR:MOUNTPOINT]... [--env NAME=VALUE]... -- ARG..."
image=''
bundle=''
secrets=()
env_extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --image) image=$2; shift 2 ;;
    --bundle) bundle=$2; shift 2 ;;
    --secret) secrets+=("$2"); shift 2 ;;
    --env) env_extra+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "image-run: unknown argument $1; $usage" >&2; exit 2 ;;
  esac
done
[ -n "$image" ] && [ -n "$bundle" ] && [ -d "$bundle/rootfs" ] || {
  echo "image-run: --image and an unpacked --bundle are required; $usage" >&2
  exit 2
}
rootfs=$(cd "$bundle/rootfs" && pwd)
# The image's own config (not umoci's runtime config, which rewrites HOME from /etc/passwd), one
# value per line: uid, gid, working directory, then the entrypoint and the environment, NUL-free.
mapfile -t config < <(node -e '
  const fs = require("node:fs");
  const [layout, tag] = [process.argv[1].replace(/:[^:]*$/, ""), process.argv[1].replace(/^.*:/, "")];
  const blob = (digest) => fs.readFileSync(`${layout}/blobs/${digest.replace(":", "/")}`, "utf8");
  const index = JSON.parse(fs.readFileSync(`${layout}/index.json`, "utf8"));
  const entry = index.manifests.find((m) => m.annotations?.["org.opencontainers.image.ref.name"] === tag);
  if (!entry) throw new Error(`no tag ${tag} in ${layout}`);
  const { config } = JSON.parse(blob(JSON.parse(blob(entry.digest)).config.digest));
  const [uid, gid] = config.User.split(":");
  const out = [uid, gid ?? uid, config.WorkingDir || "/", JSON.stringify([...(config.Entrypoint ?? []), ...(config.Cmd ?? [])]), JSON.stringify(config.Env ?? [])];
  console.log(out.join("\n"));
' "$image")
uid=${config[0]}
gid=${config[1]}
cwd=${config[2]}
mapfile -t entrypoint < <(node -e 'for (const a of JSON.parse(process.argv[1])) console.log(a)' "${config[3]}")
mapfile -t image_env < <(node -e 'for (const e of JSON.parse(process.argv[1])) console.log(e)' "${config[4]}")

# Mount points for the secrets are made before the root turns read-only, as a runtime makes them in
# the container's own layer.
for secret in "${secrets[@]}"; do
  mkdir -p "$rootfs/${secret#*:}"
done

exec unshare --mount --pid --fork --propagation private -- bash -c '
  set -euo pipefail
  rootfs=$1 uid=$2 gid=$3 cwd=$4
  shift 4
  secrets=() envs=()
  while [ "$1" != --env-start ]; do secrets+=("$1"); shift; done
  shift
  while [ "$1" != --args-start ]; do envs+=("$1"); shift; done
  shift
  mount --bind "$rootfs" "$rootfs"
  mount -t proc -o nosuid,nodev,noexec proc "$rootfs/proc"
  mount --rbind /dev "$rootfs/dev"
  mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$rootfs/tmp"
  for secret in "${secrets[@]}"; do
    mount --bind "${secret%%:*}" "$rootfs/${secret#*:}"
    mount -o remount,bind,ro "$rootfs/${secret#*:}"
  done
  mount -o remount,bind,ro "$rootfs"
  exec env -i "${envs[@]}" unshare --root="$rootfs" --wd="$cwd" --setgid="$gid" --setuid="$uid" -- "$@"
' image-run "$rootfs" "$uid" "$gid" "$cwd" "${secrets[@]}" --env-start "${image_env[@]}" "${env_extra[@]}" \
  --args-start "${entrypoint[@]}" "$@"
