# chainintel — build, run and test the whole platform.
#
#   make run     the whole platform on this machine (URL and dev API key printed)
#   make test    lint + unit/integration tests + chart validation + e2e (what CI runs)
#
# Tools the build needs are installed into .bin/ from the Go module proxy, pinned.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

GO  ?= go
BIN := $(CURDIR)/.bin

# Pinned tool versions.
PROTOC_GEN_GO_VERSION := v1.36.12
HELM_VERSION          := v3.22.0
GETH_VERSION          := v1.16.7
GOCYCLO_VERSION       := v0.6.0

export CHAININTEL_HELM := $(BIN)/helm
export CHAININTEL_GETH := $(BIN)/geth
export GOFLAGS := -buildvcs=false

# Every module of the workspace, and the packages of each.
MODULE_DIRS := $(shell $(GO) list -m -f '{{.Dir}}' 2>/dev/null)
ALL_PKGS    := $(addsuffix /...,$(MODULE_DIRS))
E2E_PKGS    := $(CURDIR)/e2e/...
CHART_PKGS  := $(filter $(CURDIR)/charts/...,$(ALL_PKGS))
UNIT_PKGS   := $(filter-out $(E2E_PKGS) $(CHART_PKGS),$(ALL_PKGS))

TEST_FLAGS ?= -count=1 -timeout 30m

# The complexity gate of `make lint` skips test files, as funclen does (a test reads as one
# scenario, see dev/cmd/funclen); no directory is skipped.
GOCYCLO_IGNORE := _test\.go$$

.PHONY: help
help: ## list targets
	@grep -hE '^[a-z][a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*## "}{printf "  %-10s %s\n", $$1, $$2}'

.PHONY: run
run: ## run the whole platform locally (prints the URL and a dev API key)
	@# Built, then run directly: `go run` exits 1 whenever it receives SIGINT, whatever its
	@# child answers, so Ctrl-C (a clean stop, exit 0 from the binary) would end in an error.
	$(GO) build -o $(CURDIR)/.cache/run/chainintel ./dev/cmd/chainintel
	$(CURDIR)/.cache/run/chainintel

.PHONY: status
status: ## one screen of the running `make run`: health, consumer lag, ingest position, last errors
	$(GO) run ./dev/cmd/chainintel status

.PHONY: build
build: ## build every binary
	$(GO) build $(ALL_PKGS)

.PHONY: test
test: tools lint unit race charts e2e ## everything CI runs

.PHONY: unit
unit: ## unit and integration tests of every module (real PostgreSQL and Redis, in-process Kafka)
	$(GO) test $(TEST_FLAGS) -p 2 $(UNIT_PKGS)

# The race detector (and its checkptr) over the parsers of a chain node's answers and the
# stream's connection code (its deliveries, saves and charges run on several goroutines): the
# whole of unit under -race takes about four times as long.
RACE_PKGS := $(CURDIR)/libs/httpx/... $(CURDIR)/services/ingest/internal/evm/... $(CURDIR)/services/stream-fanout/internal/ws/...

.PHONY: race
race: ## the race detector over the node parsers and the stream's connection code
	$(GO) test $(TEST_FLAGS) -race $(RACE_PKGS)

.PHONY: e2e
e2e: ## the e2e suite against a local stack it starts (or CHAININTEL_E2E_URL)
	$(GO) test $(TEST_FLAGS) $(E2E_PKGS)

.PHONY: chaos
chaos: ## the fault suite: Redis stopped, PostgreSQL cut, under a steady client (make e2e runs it too)
	$(GO) test $(TEST_FLAGS) -v -run TestFaults $(CURDIR)/e2e/chaos/

.PHONY: charts
charts: $(BIN)/helm ## render every Helm chart and validate it against the Kubernetes API types
	@if [ -n "$(CHART_PKGS)" ]; then $(GO) test $(TEST_FLAGS) $(CHART_PKGS); else echo "no chart tests"; fi

.PHONY: lint
lint: $(BIN)/gocyclo ## gofmt, go vet, cyclomatic complexity <= 25 and functions <= 80 lines
	@out=$$(gofmt -l $(MODULE_DIRS)); if [ -n "$$out" ]; then echo "not gofmt-formatted:"; echo "$$out"; exit 1; fi
	$(GO) vet $(ALL_PKGS)
	@out=$$($(BIN)/gocyclo -over 25 -ignore '$(GOCYCLO_IGNORE)' $(MODULE_DIRS)); if [ -n "$$out" ]; then echo "cyclomatic complexity over 25 (split it, or say why above it with //gocyclo:ignore):"; echo "$$out"; exit 1; fi
	@$(GO) build -o $(CURDIR)/.cache/lint/funclen ./dev/cmd/funclen
	@$(CURDIR)/.cache/lint/funclen -max 80 $(MODULE_DIRS) || { echo "functions over 80 lines (split them, or say why above them with // funclen: <reason>)"; exit 1; }

.PHONY: bench
bench: ## print the performance figures each issue names
	@bash scripts/bench.sh

.PHONY: generate
generate: $(BIN)/protoc-gen-go ## regenerate protobuf Go code
	@command -v protoc >/dev/null || { echo "installing protoc (Debian package protobuf-compiler)"; apt-get install -y protobuf-compiler >/dev/null; }
	cd proto && PATH=$(BIN):$$PATH protoc -I . --go_out=. --go_opt=module=github.com/chainintel/chainintel/proto chainintel/events/v1/*.proto

.PHONY: tools
tools: $(BIN)/helm $(BIN)/geth $(BIN)/protoc-gen-go $(BIN)/gocyclo ## install pinned tools into .bin

$(BIN)/protoc-gen-go:
	GOBIN=$(BIN) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)

$(BIN)/helm:
	GOBIN=$(BIN) $(GO) install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)

$(BIN)/geth:
	GOBIN=$(BIN) $(GO) install github.com/ethereum/go-ethereum/cmd/geth@$(GETH_VERSION)

$(BIN)/gocyclo:
	GOBIN=$(BIN) $(GO) install github.com/fzipp/gocyclo/cmd/gocyclo@$(GOCYCLO_VERSION)

.PHONY: clean
clean: ## remove installed tools and build outputs
	rm -rf $(BIN)
