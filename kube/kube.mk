# The kube module's targets, included from the Makefile: the real API
# server its tests and demo run, and make demo-k8s.

.PHONY: kube-bins demo-k8s

## kube-bins: build kube-apiserver and etcd from their Go modules into bin/,
## once (skipped when both report the versions pinned in
## scripts/build-kube.sh); the kube module's tests run them through envtest.
kube-bins:
	@./scripts/build-kube.sh

# The kube module's tests need the API server: built before them.
test-nested: kube-bins

## demo-k8s: against a real API server (kube-apiserver and etcd from bin/):
## a controller's condition transitions, each once and after the status
## write, then objects applied and watched until ready, in the live view.
demo-k8s: kube-bins
	@cd kube && OTEL_LOGS_EXPORTER=$${OTEL_LOGS_EXPORTER:-live} $(GO) run ./examples/k8s-controller
