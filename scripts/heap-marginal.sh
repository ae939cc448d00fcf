#!/usr/bin/env bash
# Marginal heap cost of a tracked source and of a tracked workload (docs/performance.md, "Marginal
# cost"). One kreload process, three heap snapshots taken after it settles:
#   a: SOURCES ConfigMaps + SOURCES Secrets (10 KiB each) and WORKLOADS Deployments;
#   b: a + the same number of sources again            -> (b - a) / (2 * SOURCES)  per source;
#   c: b + WORKLOADS more Deployments                   -> (c - b) / WORKLOADS      per workload.
# Each snapshot forces a full GC first, so it counts live objects only. RSS and the V8 heap are
# printed before each snapshot (after the first one, RSS includes what taking a snapshot cost).
#
#   KUBECONFIG=<admin kubeconfig> bash scripts/heap-marginal.sh [out-dir]
# Environment: SOURCES (default 1000 per kind), WORKLOADS (default 200), LINGER_SEC (default 35, the
# wait after the last request), NODE (default: the project's Node).
set -euo pipefail

cd "$(dirname "$0")/.."
out=${1:-.cache/heap-marginal/$(date -u +%Y%m%dT%H%M%S)}
sources=${SOURCES:-1000}
workloads=${WORKLOADS:-200}
node=${NODE:-$(readlink -f node_modules/.bin/node)}
ns="heap-marginal-$RANDOM$RANDOM"
metrics_port=$((20000 + RANDOM % 20000))
pprof_port=$((metrics_port + 1))
mkdir -p "$out"

payload=$(head -c 7680 /dev/zero | tr '\0' 'x') # 7.5 KiB, 10 KiB once base64-encoded in a Secret

# Prints `count` objects of one kind, numbered from `first`.
objects() {
  local kind=$1 first=$2 count=$3 i
  for ((i = first; i < first + count; i++)); do
    case $kind in
      configmap)
        printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d, namespace: %s}\ndata: {key: "%s-%d"}\n---\n' \
          "$i" "$ns" "${payload}${payload:0:2560}" "$i"
        ;;
      secret)
        printf 'apiVersion: v1\nkind: Secret\nmetadata: {name: secret-%d, namespace: %s}\nstringData: {key: "%s-%d"}\n---\n' \
          "$i" "$ns" "$payload" "$i"
        ;;
      deployment)
        printf 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app-%d, namespace: %s, annotations: {reloader.stakater.com/auto: "true"}}\nspec:\n  replicas: 0\n  selector: {matchLabels: {app: app-%d}}\n  template:\n    metadata: {labels: {app: app-%d}}\n    spec:\n      containers:\n      - name: app\n        image: registry.k8s.io/pause:3.10\n        envFrom: [{configMapRef: {name: cm-%d}}, {secretRef: {name: secret-%d}}]\n---\n' \
          "$i" "$ns" "$i" "$i" "$i" "$i"
        ;;
    esac
  done
}

create() {
  local kind=$1 first=$2 count=$3 chunk=250 start
  for ((start = first; start < first + count; start += chunk)); do
    objects "$kind" "$start" $((chunk < first + count - start ? chunk : first + count - start)) |
      kubectl create -f - >/dev/null
  done
}

# Waits until kreload has made no request but watches for 5 s (its rest_client_requests_total
# stops moving), then takes a snapshot.
snapshot() {
  local name=$1 previous='' current
  while true; do
    sleep 5
    current=$(curl -sf "http://127.0.0.1:$metrics_port/metrics" | grep '^rest_client_requests_total' | grep -v 'method="WATCH"' | awk '{s += $NF} END {print s}')
    [[ $current == "$previous" ]] && break
    previous=$current
  done
  # Request deadlines (AbortSignal.timeout, 30 s) of the last writes still hold a timer each.
  sleep "${LINGER_SEC:-35}"
  # Before the snapshot, which itself allocates: RSS against what V8 has committed is Node's
  # native memory (ADR 0033's reserve).
  curl -sf "http://127.0.0.1:$metrics_port/metrics" |
    grep -E '^(process_resident_memory_bytes|nodejs_heap_size_total_bytes|nodejs_heap_size_used_bytes) ' |
    awk -v name="$name" '{printf "%s: %s %.1f MiB\n", name, $1, $2 / 1048576}'
  curl -sf "http://127.0.0.1:$pprof_port/debug/heapsnapshot" -o "$out/$name.heapsnapshot"
  "$node" scripts/heap-summary.ts "$out/$name.heapsnapshot" --top 30 >"$out/$name.txt"
  grep -v '^[0-9]' "$out/$name.txt" | head -1 | sed "s/^/$name: /"
}

cleanup() {
  [[ -n ${pid:-} ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
}
trap cleanup EXIT

kubectl create namespace "$ns" >/dev/null
create configmap 0 "$sources"
create secret 0 "$sources"
create deployment 0 "$workloads"
"$node" dist/main.js --namespaces="$ns" --metrics-port="$metrics_port" --enable-pprof \
  --pprof-addr="127.0.0.1:$pprof_port" --log-format=json --log-level=warn >"$out/kreload.log" 2>&1 &
pid=$!
snapshot a
create configmap "$sources" "$sources"
create secret "$sources" "$sources"
snapshot b
create deployment "$workloads" "$workloads"
snapshot c
echo "sources per kind: $sources then $((2 * sources)); workloads: $workloads then $((2 * workloads)); results in $out"
