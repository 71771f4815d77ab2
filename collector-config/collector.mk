# collector-config/collector.mk: the collector's targets, included from the
# root Makefile (`include collector-config/collector.mk`). Uses $(GO).
#
#   make collector        build bin/otelcol-progress (Go module proxy only)
#   make test-collector   manifest/config tests and the end-to-end suite
#   make test-rules       promtool check/test of the Prometheus rules
#   make test-scale       the two-tier deployment under faults (build tag scale)
#   make demo-pipeline    driver -> OTLP -> collector -> Kafka -> printed

# The e2e module builds against the working tree of the root module
# (replace ../..): -mod=mod lets it follow new root dependencies without a
# manual `go mod tidy` there.
GO            ?= go
OTELCOL_BIN   ?= bin/otelcol-progress

.PHONY: collector test-collector test-rules test-scale demo-pipeline

# One build serves the host and the image (deploy/deploy.mk's `make image`
# packs this binary): static (no cgo: the image has no libc; the collector
# uses none, and Go's own DNS resolver reads /etc/resolv.conf as glibc's
# would), without paths of the build machine, and without the symbol table
# and DWARF (a panic's stack still names functions and lines; a debugger
# needs a build of your own).
OTELCOL_GOFLAGS := -trimpath -ldflags=-s\ -w

## collector: build the OpenTelemetry Collector distribution bin/otelcol-progress
## (static; the image ships this binary).
collector:
	cd collector-config/otelcol && CGO_ENABLED=0 $(GO) build $(OTELCOL_GOFLAGS) -o $(CURDIR)/$(OTELCOL_BIN) .

## test-collector: manifest vs main.go, every config validated, the tnco
## processor against the stock processors it stands in for, and the
## end-to-end suite against the built collector and an in-process Kafka.
test-collector: collector test-rules
	cd collector-config/otelcol && $(GO) vet ./... && $(GO) test -count=1 ./...
	cd collector-config/tncoprocessor && $(GO) vet ./... && $(GO) test -race -count=1 ./...
	cd collector-config/admissionextension && $(GO) vet ./... && $(GO) test -race -count=1 ./...
	cd collector-config/e2e && $(GO) vet -mod=mod ./... && \
		PROGRESS_OTELCOL_BIN=$(CURDIR)/$(OTELCOL_BIN) $(GO) test -mod=mod -race -count=1 -timeout 15m ./...

## test-rules: the alerting and recording rules are valid, and each alert
## fires on its condition and stays silent on a healthy series (promtool,
## from Debian's prometheus package: scripts/install-tools.sh).
test-rules:
	cd collector-config/prometheus && promtool check rules rules.yaml && promtool test rules rules_test.yaml

## test-scale: 2 agents, 3 gateways, a partitioned broker, 20 concurrent
## runs, Debian's prometheus on the shipped rules: a healthy run and each
## fault (gateway SIGKILL, SIGTERM, SIGSTOP; agent SIGKILL; Kafka down;
## both tiers stopped during a Kafka outage), with figures (FIGURES lines)
## checked against the bounds of docs/collector.md's fault table. About 3 minutes (2m25s measured).
test-scale: collector
	cd collector-config/e2e && $(GO) vet -mod=mod -tags scale ./... && \
		PROGRESS_OTELCOL_BIN=$(CURDIR)/$(OTELCOL_BIN) $(GO) test -mod=mod -tags scale -count=1 -timeout 20m -run '^TestScale' -v .

## demo-pipeline: the ansible demo driver through the shipped collector
## config to a local Kafka-protocol broker; prints what TNCO receives.
demo-pipeline: collector
	cd collector-config/e2e && $(GO) run -mod=mod ./cmd/demo-pipeline -root $(CURDIR)
