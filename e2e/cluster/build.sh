#!/usr/bin/env bash
# Builds etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok (sigs.k8s.io/kwok,
# the fake nodes' kubelet) from the Go module proxy into .cache/control-plane/<key>/bin. The key
# covers everything that changes the binaries, so a complete cache makes this a no-op. Prints the
# cache's bin directory on the last line.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cluster="$root/e2e/cluster"
tag=$(awk '$1 == "k8s.io/kubernetes" {print $2; exit}' "$cluster/k8s/go.mod")
[ -n "$tag" ] || tag=$(sed -n 's#^require k8s.io/kubernetes \(v[0-9.]*\)$#\1#p' "$cluster/k8s/go.mod")
etcd_version=$(awk '$1 == "go.etcd.io/etcd/server/v3" {print $2; exit}' "$cluster/etcd/go.mod")
kwok_version=$(awk '$1 == "sigs.k8s.io/kwok" {print $2; exit}' "$cluster/kwok/go.mod")
minor=${tag#v1.}; minor=${minor%%.*}
v=k8s.io/component-base/version
ld="-s -w -X $v.gitVersion=$tag -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean -X $v.buildDate=1970-01-01T00:00:00Z"
binaries=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)
key=$( { go version; echo "$tag $etcd_version $ld $kwok_version ${binaries[*]}"; cat "$cluster/k8s/go.sum" "$cluster/etcd/go.sum" "$cluster/kwok/go.sum"; } | sha256sum | cut -c1-16)
cache="$root/.cache/control-plane"
dest="$cache/$key"
complete() { local name; for name in "${binaries[@]}"; do [ -x "$dest/bin/$name" ] || return 1; done; }
if complete; then
  echo "control plane: cached ($tag, etcd $etcd_version, kwok $kwok_version)" >&2
  echo "$dest/bin"
  exit 0
fi
mkdir -p "$cache"
tmp=$(mktemp -d "$cache/tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin"
export CGO_ENABLED=0
start=$(date +%s)
echo "control plane: first run builds Kubernetes $tag, etcd $etcd_version and kwok $kwok_version from source (about 15-30 min on 2 cores); later runs reuse $cache" >&2
build() { # name, dir, log, go build args...
  local name=$1 dir=$2 log=$3; shift 3
  echo "control plane: building $name (log: $log)" >&2
  ( cd "$dir" && go build "$@" ) >"$log" 2>&1 &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 30
    kill -0 "$pid" 2>/dev/null && echo "control plane: still building $name, $(( $(date +%s) - start ))s elapsed" >&2
  done
  if ! wait "$pid"; then
    echo "control plane: building $name failed; command: (cd $dir && go build $*); last lines of $log:" >&2
    tail -n 30 "$log" >&2
    exit 1
  fi
}
logdir="$cache/logs"; mkdir -p "$logdir"
build etcd "$cluster/etcd" "$logdir/etcd-build.log" -trimpath -ldflags "-s -w" -o "$tmp/bin/etcd" go.etcd.io/etcd/server/v3
build "kube-apiserver, kube-controller-manager and kube-scheduler" "$cluster/k8s" "$logdir/k8s-build.log" -trimpath -ldflags "$ld" -o "$tmp/bin/" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler
build kwok "$cluster/kwok" "$logdir/kwok-build.log" -trimpath -ldflags "-s -w" -o "$tmp/bin/kwok" sigs.k8s.io/kwok/cmd/kwok
rm -rf "$dest"
mv "$tmp" "$dest"
trap - EXIT
echo "control plane: built in $(( $(date +%s) - start ))s" >&2
echo "$dest/bin"
