# provider-cloudsql-postgres
#
# Two commands set everything up on a fresh machine: `make demo` and `make test`.
# The only downloads are Go modules; kube-apiserver, etcd and kubectl for tests and the
# demo are built from Go modules by the hack/tools module, once, into a cache directory.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

GO ?= go
K8S_VERSION := $(shell awk '/^[[:space:]]*(require[[:space:]]+)?k8s\.io\/kubernetes v/ && !/=>/ { print $$NF }' hack/tools/go.mod)
K8S_MINOR := $(word 2,$(subst ., ,$(K8S_VERSION)))
# The cache is keyed by everything that decides what the tools module builds, so that a
# fresh clone reuses it and a change to hack/tools rebuilds it.
TOOLS_HASH := $(shell cat hack/tools/go.mod hack/tools/go.sum hack/tools/etcd/main.go | sha256sum | cut -c1-12)
CACHE_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/provider-cloudsql-postgres
TOOLS_DIR := $(CACHE_DIR)/control-plane-$(K8S_VERSION)-$(TOOLS_HASH)
export KUBEBUILDER_ASSETS := $(TOOLS_DIR)

# The Crossplane CLI (crank) for `make xpkg` and the composition tests, cached the same way.
CROSSPLANE_VERSION := $(shell awk '/crossplane\/crossplane\/v2 v/ && !/=>/ { print $$NF }' hack/crank/go.mod)
CRANK_HASH := $(shell cat hack/crank/go.mod hack/crank/go.sum | sha256sum | cut -c1-12)
CRANK_DIR := $(CACHE_DIR)/crossplane-cli-$(CROSSPLANE_VERSION)-$(CRANK_HASH)
export CROSSPLANE_CLI := $(CRANK_DIR)/crossplane
# Crossplane's own CRDs ship in its module; tests install them beside ours.
# (go mod download, unlike go list -m, fetches the module when the cache lacks it.)
export CROSSPLANE_CRDS = $(shell cd hack/crank && $(GO) mod download -json github.com/crossplane/crossplane/v2 | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$$/\1/p')/cluster/crds

K8S_LDFLAGS := -s -w \
	-X k8s.io/component-base/version.gitVersion=$(K8S_VERSION) \
	-X k8s.io/component-base/version.gitMajor=1 \
	-X k8s.io/component-base/version.gitMinor=$(K8S_MINOR) \
	-X k8s.io/component-base/version.gitTreeState=clean

BIN_DIR := bin
GO_TEST_FLAGS ?=

.PHONY: help
help: ## List the targets.
	@awk 'BEGIN { FS = ":.*## " } /^[a-zA-Z_-]+:.*## / { printf "  %-16s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

.PHONY: generate
generate: ## Regenerate deepcopy, managed-resource methods, package/crds and docs/api.md (go generate ./...).
	$(GO) generate ./...

# Generated files are hashed before and after regeneration: any difference means the
# committed files were stale (they are regenerated now; commit them).
GENERATED = find apis package/crds docs -type f \( -name 'zz_generated.*' -o -name '*.yaml' -o -name '*.md' \) | LC_ALL=C sort | xargs sha256sum
.PHONY: check-generated
check-generated: ## Fail when generated code or CRDs are out of date.
	@before="$$($(GENERATED))"; $(GO) generate ./...; after="$$($(GENERATED))"; \
	if [ "$$before" != "$$after" ]; then \
	  diff <(echo "$$before") <(echo "$$after") || true; \
	  echo "generated files were stale; they have been regenerated: review and commit them"; exit 1; \
	fi; echo "generated files are up to date"

.PHONY: control-plane
control-plane: $(TOOLS_DIR)/.built ## Build kube-apiserver, etcd and kubectl from Go modules (cached).

$(TOOLS_DIR)/.built:
	@echo "building kube-apiserver, etcd and kubectl $(K8S_VERSION) into $(TOOLS_DIR) (once; a few minutes on 2 cores)"
	@mkdir -p $(CACHE_DIR); tmp=$$(mktemp -d $(CACHE_DIR)/build.XXXXXX); \
	cd hack/tools && CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(K8S_LDFLAGS)" -o $$tmp/ \
	  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl ./etcd; \
	rm -rf $(TOOLS_DIR); mv $$tmp $(TOOLS_DIR); touch $(TOOLS_DIR)/.built

.PHONY: crossplane-cli
crossplane-cli: $(CRANK_DIR)/.built ## Build the Crossplane CLI (crank) from Go modules (cached).

$(CRANK_DIR)/.built:
	@echo "building the Crossplane CLI $(CROSSPLANE_VERSION) into $(CRANK_DIR) (once)"
	@mkdir -p $(CACHE_DIR); tmp=$$(mktemp -d $(CACHE_DIR)/build.XXXXXX); \
	cd hack/crank && CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w" -o $$tmp/crossplane github.com/crossplane/crossplane/v2/cmd/crank; \
	rm -rf $(CRANK_DIR); mv $$tmp $(CRANK_DIR); touch $(CRANK_DIR)/.built

.PHONY: xpkg
xpkg: crossplane-cli ## Build provider-cloudsql-postgres.xpkg and function-cloudsql-postgres.xpkg into _output/ (no Docker needed).
	$(GO) run ./hack/xpkg --out _output

.PHONY: build
build: ## Build the commands into bin/.
	@mkdir -p $(BIN_DIR)
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN_DIR)/ ./cmd/...

.PHONY: lint
lint: ## go vet and a gofmt check.
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

.PHONY: test
test: control-plane crossplane-cli check-generated lint ## Run every test against a real kube-apiserver and the Cloud SQL emulator.
	$(GO) test $(GO_TEST_FLAGS) ./...
	$(GO) test -race $(GO_TEST_FLAGS) ./internal/emulator/... ./internal/clients/...

.PHONY: bench
bench: control-plane crossplane-cli ## Run the benchmarks and print their figures.
	$(GO) test -run '^$$' -bench . -benchmem ./...

.PHONY: demo
demo: control-plane ## Run a local control plane with the CRDs and examples applied (Ctrl-C stops it).
	$(GO) run ./hack/demo $(DEMO_FLAGS)

.PHONY: clean
clean: ## Remove build output (the tool cache stays; `make clean-cache` removes it).
	rm -rf $(BIN_DIR) _output

.PHONY: clean-cache
clean-cache: ## Remove the cached control-plane binaries and Crossplane CLI.
	rm -rf $(CACHE_DIR)
