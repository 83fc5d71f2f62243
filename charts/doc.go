// Package charts validates chainintel's Kubernetes deployment: the Helm charts in this directory,
// the kind and development manifests in k8s/, the Dockerfile's build context and skaffold.yaml.
// Nothing here runs in the platform. The tests render every chart with `helm template` (the
// binary from $CHAININTEL_HELM, else PATH; skipped without one) and decode every object strictly
// into the Kubernetes API types with Decode, then check the properties the platform relies on.
package charts
