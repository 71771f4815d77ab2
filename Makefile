# The habits of this repo: make demo, make test, make bench, make lint, make fuzz.
GO          ?= go
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
# Nested modules, each with its own go.mod: the core module never depends on them.
NESTED      := $(wildcard kube/go.mod)

.PHONY: all test test-core test-nested demo demo-k8s lint fmt vet staticcheck bench fuzz soak clean

all: test

## test: every test of every module, with the race detector.
test: test-core test-nested

test-core:
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

test-nested:
	@for m in $(dir $(NESTED)); do \
		echo "== $$m"; \
		(cd $$m && $(GO) vet ./... && $(GO) test -race -count=1 ./...) || exit 1; \
	done

## demo: an Ansible playbook run reported live, pretty even when piped.
demo:
	@OTEL_LOGS_EXPORTER=$${OTEL_LOGS_EXPORTER:-pretty} $(GO) run ./examples/ansible-driver

## demo-k8s: a controller driving provisioning and lifecycle transitions.
demo-k8s:
	@cd kube && OTEL_LOGS_EXPORTER=$${OTEL_LOGS_EXPORTER:-pretty} $(GO) run ./examples/k8s-controller

## lint: gofmt, go vet and staticcheck on every module.
lint: fmt vet staticcheck

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	@for m in $(dir $(NESTED)); do (cd $$m && $(GO) vet ./...) || exit 1; done

staticcheck:
	$(STATICCHECK) ./...
	@for m in $(dir $(NESTED)); do (cd $$m && $(STATICCHECK) ./...) || exit 1; done

clean:
	rm -rf bin
