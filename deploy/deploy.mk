# deploy/deploy.mk: the image and the chart, included from the root
# Makefile (`include deploy/deploy.mk`). Uses $(GO). The deploy module
# (deploy/go.mod) holds the image builder, the entrypoint and the tests.
#
#   make image        the collector image as an OCI archive, FROM scratch
#   make test-image   the image unpacked (umoci) and run against kfake
#   make helm         bin/helm from its Go module (scripts/build-helm.sh)
#   make lint-chart   helm lint of deploy/chart
#   make test-deploy  the chart rendered and applied server-side to a real
#                     API server, its alerts in promtool, docs/deploy.md run

.PHONY: image test-image helm lint-chart test-deploy tidy-deploy

# make test and make lint run the deploy module's stages too; its go vet
# and staticcheck run with the other nested modules'.
test: test-image test-deploy
lint: lint-chart tidy-deploy
LINT_MODULES += deploy

tidy-deploy:
	@cd deploy && $(GO) mod tidy -diff >/dev/null || { echo "go mod tidy needed in deploy"; exit 1; }

# The image's version and tag is the distribution's (the OCB manifest's
# dist.version, which otelcol/manifest_test.go holds to main.go).
IMAGE_VERSION := $(shell sed -n 's/^  version: *//p' collector-config/builder-config.yaml)
IMAGE_ARCHIVE ?= bin/otelcol-progress-$(IMAGE_VERSION).oci.tar
# Reproducible: the files and the config carry the last commit's time.
IMAGE_CREATED ?= $(shell git log -1 --format=%ct 2>/dev/null)
IMAGE_REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
# Static binaries (the image has no libc), without symbol tables.
IMAGE_GOFLAGS := -trimpath -ldflags=-s\ -w

## image: the collector image otelcol-progress:$(IMAGE_VERSION) as an OCI
## archive in $(IMAGE_ARCHIVE): FROM scratch, the static collector and the
## entrypoint (no shell), uid 10001 (deploy/image, go-containerregistry).
image:
	@mkdir -p bin/image
	cd collector-config/otelcol && CGO_ENABLED=0 $(GO) build $(IMAGE_GOFLAGS) -o $(CURDIR)/bin/image/otelcol-progress .
	cd deploy && CGO_ENABLED=0 $(GO) build $(IMAGE_GOFLAGS) -o $(CURDIR)/bin/image/entrypoint ./entrypoint
	cd deploy && $(GO) run ./image -collector $(CURDIR)/bin/image/otelcol-progress -entrypoint $(CURDIR)/bin/image/entrypoint \
		-configs $(CURDIR)/collector-config -license $(CURDIR)/LICENSE -version $(IMAGE_VERSION) \
		-revision "$(IMAGE_REVISION)" -created "$(IMAGE_CREATED)" -out $(CURDIR)/$(IMAGE_ARCHIVE)

## test-image: the image unpacked with umoci (Debian) and its entrypoint run
## from the unpacked root (chroot, as the image's user) against kfake: two
## tenants' records reach their topics (needs root for the chroot).
test-image: image
	cd deploy && $(GO) vet ./... && PROGRESS_IMAGE_ARCHIVE=$(CURDIR)/$(IMAGE_ARCHIVE) $(GO) test -count=1 -timeout 10m ./entrypoint/ ./image/

## helm: build the Helm CLI (v4) from its Go module into bin/helm, once.
helm:
	@./scripts/build-helm.sh

## lint-chart: helm lint of the chart, with its default values and with
## every switch on.
lint-chart: helm
	bin/helm lint --strict deploy/chart
	bin/helm lint --strict deploy/chart -f deploy/chart/ci/all-values.yaml

## test-deploy: the chart rendered by helm and applied server-side to a real
## API server (bin/kube-apiserver, bin/etcd) with the Prometheus Operator's
## CRDs, its alerts in promtool on the scrape's labels, and every command of
## docs/deploy.md run in order.
test-deploy: helm kube-bins image
	cd deploy && $(GO) vet ./... && PROGRESS_IMAGE_ARCHIVE=$(CURDIR)/$(IMAGE_ARCHIVE) $(GO) test -count=1 -timeout 15m ./charttest/ ./doctest/
