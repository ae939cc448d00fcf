// Pins the argo-rollouts release whose CRD manifests e2e/cluster/crds.sh copies (go mod download -json).
// Nothing is built or imported from it; go.sum verifies the module zip.
module kreload.test/cluster/crd-modules/argo-rollouts

go 1.26.8

require github.com/argoproj/argo-rollouts v1.9.0
