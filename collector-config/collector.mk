# collector-config/collector.mk: the collector's targets, included from the
# root Makefile (`include collector-config/collector.mk`). Uses $(GO).
#
#   make collector        build bin/otelcol-progress (Go module proxy only)
#   make test-collector   manifest/config tests and the end-to-end suite
#   make demo-pipeline    driver -> OTLP -> collector -> Kafka -> printed

# The e2e module builds against the working tree of the root module
# (replace ../..): -mod=mod lets it follow new root dependencies without a
# manual `go mod tidy` there.
GO            ?= go
OTELCOL_BIN   ?= bin/otelcol-progress

.PHONY: collector test-collector demo-pipeline

## collector: build the OpenTelemetry Collector distribution bin/otelcol-progress.
collector:
	cd collector-config/otelcol && $(GO) build -trimpath -o $(CURDIR)/$(OTELCOL_BIN) .

## test-collector: manifest vs main.go, every config validated, the tnco
## processor against the stock processors it stands in for, and the
## end-to-end suite against the built collector and an in-process Kafka.
test-collector: collector
	cd collector-config/otelcol && $(GO) vet ./... && $(GO) test -count=1 ./...
	cd collector-config/tncoprocessor && $(GO) vet ./... && $(GO) test -race -count=1 ./...
	cd collector-config/e2e && $(GO) vet -mod=mod ./... && \
		PROGRESS_OTELCOL_BIN=$(CURDIR)/$(OTELCOL_BIN) $(GO) test -mod=mod -race -count=1 -timeout 15m ./...

## demo-pipeline: the ansible demo driver through the shipped collector
## config to a local Kafka-protocol broker; prints what TNCO receives.
demo-pipeline: collector
	cd collector-config/e2e && $(GO) run -mod=mod ./cmd/demo-pipeline -root $(CURDIR)
