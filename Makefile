# The habits of this repo: make demo, make test, make bench, make lint, make fuzz.
GO          ?= go
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
# Nested modules, each with its own go.mod: the core module never depends on them.
NESTED      := $(wildcard kube/go.mod tncomessage/go.mod)
# Every nested module, for lint; the collector ones follow the root module's
# working tree (replace ../..), hence -mod=mod.
LINT_MODULES := kube tncomessage bench/e2e collector-config/otelcol collector-config/tncoprocessor collector-config/admissionextension collector-config/e2e

.PHONY: all tidy tools progressotel bench-cli test test-core test-nested demo demo-k8s demo-http demo-terraform tofu otel-cli bench-terraform bench-ansible lint fmt vet staticcheck bench bench-e2e fuzz soak licenses clean

# The stages of make test, in order; the included files add theirs.
TEST_STAGES := test-core test-allocs test-nested test-collector test-scale

# collector, test-collector, demo-pipeline: the Collector build and its e2e suite.
include collector-config/collector.mk
# kube-bins, demo-k8s: the real API server of the kube module's tests.
include kube/kube.mk
# image, test-image, helm, lint-chart, test-deploy: the image and the chart.
include deploy/deploy.mk

all: progressotel test

## tools: install the real tools the tests run (Ansible, ansible-runner, ssh,
## python3, tmux) from Debian's packages when missing; needs root or sudo.
tools:
	scripts/install-tools.sh

## progressotel: the command for drivers in any language, into bin/.
progressotel:
	$(GO) build -o bin/progressotel ./cmd/progressotel

## test: every test of every module, with the race detector, including the
## end-to-end suite against the real collector build (built on first run).
## One stage per target of TEST_STAGES, in order, each timed, with a table
## of the durations at the end (scripts/stages.sh); the first failure stops it.
test:
	@MAKE="$(MAKE)" scripts/stages.sh $(TEST_STAGES)

# tofu first: the terraform package's tests run the real OpenTofu; the
# progressotel command's tests run otel-cli too.
test-core: tofu otel-cli
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

## test-allocs: the allocation tests (TestRecordAllocs, ...) once more
## without -race: under the race detector sync.Pool drops items at random,
## so they skip themselves there.
.PHONY: test-allocs
test-allocs:
	$(GO) test -count=1 -run 'Alloc' ./...

## test-tmux: the live view in a real terminal: make demo, make
## demo-terraform and progressotel run in tmux panes, the screen read as
## it unfolds (also part of test-core; needs tmux, which .ci/run installs).
.PHONY: test-tmux
test-tmux: tofu
	$(GO) test -count=1 -run 'InTmux' ./examples/... ./cmd/progressotel/

test-nested:
	@for m in $(dir $(NESTED)); do \
		echo "== $$m"; \
		(cd $$m && $(GO) vet ./... && $(GO) test -race -count=1 ./...) || exit 1; \
	done

## demo: an Ansible playbook run reported live: the live view on a
## terminal, its plain lines when piped (OTEL_LOGS_EXPORTER=pretty: flat lines).
demo:
	@OTEL_LOGS_EXPORTER=$${OTEL_LOGS_EXPORTER:-live} $(GO) run ./examples/ansible-driver

## tofu: build the OpenTofu CLI from its Go module into bin/tofu, once
## (skipped when bin/tofu already has the version of scripts/build-tofu.sh).
tofu:
	@./scripts/build-tofu.sh

## otel-cli: build otel-cli from its Go module into bin/otel-cli, once: the
## peer of the environment-variable carrier in the progressotel command's tests.
otel-cli:
	@./scripts/build-otel-cli.sh

## demo-terraform: a real OpenTofu apply and destroy reported live: the
## live view on a terminal, its plain lines when piped.
demo-terraform: tofu
	@OTEL_LOGS_EXPORTER=$${OTEL_LOGS_EXPORTER:-live} $(GO) run ./examples/terraform-driver -tofu bin/tofu

## demo-http: an Ignition-style HTTP driver; POST to /api/driver/lifecycle/execute.
demo-http:
	OTEL_LOGS_EXPORTER=$${OTEL_LOGS_EXPORTER:-pretty} $(GO) run ./examples/http-driver -addr $${ADDR:-127.0.0.1:8080}

## bench: the benchmarks behind BENCHMARKS.md, one table of ratios to the baseline.
bench:
	./bench/run.sh

## bench-goals: every performance goal (Record, the export path and its bytes, each adapter's
## share of its tool's CPU, each decoder's events/s, the collector against pass-through for Go
## and Python senders, zero loss at 30,000 and 20,000 events/s), each beside its baseline, in
## one run of about 25 minutes; writes the table of BENCHMARKS.md ("The goals").
.PHONY: bench-goals
bench-goals: collector tofu
	./scripts/bench-goals.sh

## bench-live: the live view's frame (1,000 nodes) and Export per record beside the pretty exporter's.
.PHONY: bench-live
bench-live:
	./scripts/bench-live.sh

## bench-e2e: pass-through vs progress.yaml: collector and driver CPU per event, events/s with zero
## loss through OTLP gRPC, the real collector and Kafka, and a soak with RSS (about 12 minutes).
## The driver's queue is sized for 20,000 events/s (E2E_QUEUE; the library's default is 2048).
E2E_QUEUE ?= 16384
bench-e2e: collector
	cd bench/e2e && OTEL_BLRP_MAX_QUEUE_SIZE=$(E2E_QUEUE) $(GO) run . -root ../..

## bench-terraform: the terraform decoder's events/s, and the adapter's CPU beside the real OpenTofu's.
bench-terraform: tofu
	cd terraform && $(GO) test -run '^$$' -bench '^BenchmarkStream$$' -benchmem -benchtime 2s -count 3 . && \
		$(GO) test -run '^$$' -bench '^BenchmarkAdapterCPU$$' -benchtime 20x -count 3 .

## bench-ansible: the ansible decoder's events/s, and the adapter's CPU beside the real Ansible's (needs Ansible).
bench-ansible:
	$(GO) test -run '^$$' -bench 'BenchmarkStream|BenchmarkDecodeEvent' -benchmem -count 5 ./ansible && \
		$(GO) test -run '^$$' -bench '^BenchmarkRunCPU$$' -benchtime 3x -count 2 -timeout 40m ./ansible

## bench-cli: the cost of progressotel emit from a shell loop, inside a run and outside it.
bench-cli:
	./scripts/bench-cli.sh

## fuzz: every fuzz target, FUZZTIME each (default 15s), one after another.
fuzz:
	FUZZTIME=$${FUZZTIME:-15s} ./scripts/fuzz.sh

## soak: the collector flaps under load for SOAK (default 2m).
soak:
	SOAK=$${SOAK:-2m} ./scripts/soak.sh

## licenses: check that docs/licenses.md lists every dependency's licence as the module cache has it.
licenses:
	./scripts/licenses.sh --check

## lint: gofmt, go mod tidy, go vet and staticcheck on every module, the licence tables, and
## the repository itself (repocheck).
lint: fmt tidy vet staticcheck licenses repocheck

## repocheck: no tracked file over 1 MB outside testdata, no broken relative link or anchor in
## the Markdown, no Test/Fuzz/Benchmark/Example named in Markdown or a Go comment that does not
## exist (internal/testkit/docscheck).
.PHONY: repocheck
repocheck:
	$(GO) run ./internal/testkit/docscheck/repocheck

## tidy: every go.mod and go.sum is what `go mod tidy` makes of it, so that a
## module that follows the root's working tree (replace ../) never misses a
## go.sum entry for a dependency the root module gained. The collector
## distribution is left out: its tidy needs -e (test-only modules of its
## dependencies are not served).
TIDY_MODULES := . kube tncomessage bench/e2e collector-config/tncoprocessor collector-config/admissionextension collector-config/e2e
tidy:
	@for m in $(TIDY_MODULES); do (cd $$m && $(GO) mod tidy -diff >/dev/null) || { echo "go mod tidy needed in $$m"; exit 1; }; done

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## The library and its tests also build for Windows (the tests that need a
## Unix process model are in files built for unix only).
vet:
	$(GO) vet ./...
	GOOS=windows $(GO) vet ./...
	@for m in $(LINT_MODULES); do echo "== vet $$m"; (cd $$m && GOFLAGS=-mod=mod $(GO) vet ./...) || exit 1; done

staticcheck:
	$(STATICCHECK) ./...
	@for m in $(LINT_MODULES); do echo "== staticcheck $$m"; (cd $$m && GOFLAGS=-mod=mod $(STATICCHECK) ./...) || exit 1; done

clean:
	rm -rf bin
