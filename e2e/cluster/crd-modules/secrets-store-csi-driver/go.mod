// Pins the secrets-store-csi-driver release whose CRD manifests e2e/cluster/crds.sh copies (go mod download -json).
// Nothing is built or imported from it; go.sum verifies the module zip.
module kreload.test/cluster/crd-modules/secrets-store-csi-driver

go 1.26.8

require sigs.k8s.io/secrets-store-csi-driver v1.5.5
