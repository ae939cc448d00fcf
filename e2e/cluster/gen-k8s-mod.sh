#!/usr/bin/env bash
# Regenerates e2e/cluster/k8s/go.mod for a Kubernetes tag. k8s.io/kubernetes requires its staging
# modules at v0.0.0 and replaces them with ./staging paths that do not exist for a consumer, so
# each replace is pointed at the published staging tag instead; the set is derived from the tag's
# own go.mod, never by hand.
set -euo pipefail
tag=${1:?usage: gen-k8s-mod.sh v1.37.2}
staging=v0.${tag#v1.}
go mod download "k8s.io/kubernetes@$tag"
up=$(go env GOMODCACHE)/cache/download/k8s.io/kubernetes/@v/$tag.mod
cd "$(dirname "$0")/k8s"
rm -f go.mod go.sum
go mod init kreload.test/cluster/k8s
go mod edit -go="$(awk '$1 == "go" {print $2}' "$up")"
awk '/^godebug \(/ {b=1; next} b && /^\)/ {b=0} b {print $1} /^godebug [^(]/ {print $2}' "$up" |
  while read -r kv; do go mod edit -godebug="$kv"; done
sed -n 's#^[[:space:]]*\(k8s\.io/[a-z0-9-]*\) => \./staging/.*#\1#p' "$up" |
  while read -r m; do go mod edit -replace="$m=$m@$staging"; done
go mod edit -require="k8s.io/kubernetes@$tag" \
  -tool=k8s.io/kubernetes/cmd/kube-apiserver -tool=k8s.io/kubernetes/cmd/kube-controller-manager \
  -tool=k8s.io/kubernetes/cmd/kube-scheduler
go mod tidy
