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
# K8S_CMDS are the commands of k8s.io/kubernetes it builds; the list is in the key too, so
# that a cache built before kube-controller-manager joined it is built again.
K8S_CMDS := kube-apiserver kubectl kubelet kube-controller-manager
TOOLS_HASH := $(shell (cat hack/tools/go.mod hack/tools/go.sum hack/tools/etcd/main.go; echo $(K8S_CMDS)) | sha256sum | cut -c1-12)
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

# The Cloud SQL Auth Proxy that the end-to-end test and the demo run, built from the
# release hack/proxy/go.mod pins (the same release as the default [proxy] image).
PROXY_VERSION := $(shell awk '/GoogleCloudPlatform\/cloud-sql-proxy\/v2 v/ && !/=>/ { print $$NF }' hack/proxy/go.mod)
PROXY_HASH := $(shell cat hack/proxy/go.mod hack/proxy/go.sum | sha256sum | cut -c1-12)
PROXY_DIR := $(CACHE_DIR)/cloud-sql-proxy-$(PROXY_VERSION)-$(PROXY_HASH)
export CLOUD_SQL_PROXY := $(PROXY_DIR)/cloud-sql-proxy

# staticcheck and goimports for `make lint`, built from the releases hack/lint/go.mod pins,
# cached the same way; staticcheck's checks are in staticcheck.conf.
STATICCHECK_VERSION := $(shell awk '/honnef\.co\/go\/tools v/ && !/=>/ { print $$NF }' hack/lint/go.mod)
LINT_HASH := $(shell cat hack/lint/go.mod hack/lint/go.sum | sha256sum | cut -c1-12)
LINT_DIR := $(CACHE_DIR)/staticcheck-$(STATICCHECK_VERSION)-$(LINT_HASH)
STATICCHECK := $(LINT_DIR)/staticcheck
GOIMPORTS := $(LINT_DIR)/goimports

K8S_LDFLAGS := -s -w \
	-X k8s.io/component-base/version.gitVersion=$(K8S_VERSION) \
	-X k8s.io/component-base/version.gitMajor=1 \
	-X k8s.io/component-base/version.gitMinor=$(K8S_MINOR) \
	-X k8s.io/component-base/version.gitTreeState=clean

MODULE := github.com/travelaudience/cloudsql-postgres-operator
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
GENERATED = find apis package/crds docs internal/configfile -type f \( -name 'zz_generated.*' -o -name '*.yaml' -o -name '*.md' \) | LC_ALL=C sort | xargs sha256sum
.PHONY: check-generated
check-generated: ## Fail when generated code or CRDs are out of date.
	@before="$$($(GENERATED))"; $(GO) generate ./...; after="$$($(GENERATED))"; \
	if [ "$$before" != "$$after" ]; then \
	  diff <(echo "$$before") <(echo "$$after") || true; \
	  echo "generated files were stale; they have been regenerated: review and commit them"; exit 1; \
	fi; echo "generated files are up to date"

.PHONY: control-plane
control-plane: $(TOOLS_DIR)/.built ## Build kube-apiserver, etcd, kubectl, kubelet and kube-controller-manager from Go modules (cached).

$(TOOLS_DIR)/.built:
	@echo "building etcd and $(K8S_CMDS) $(K8S_VERSION) into $(TOOLS_DIR) (once; a few minutes on 2 cores)"
	@mkdir -p $(CACHE_DIR); tmp=$$(mktemp -d $(CACHE_DIR)/build.XXXXXX); \
	cd hack/tools && CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(K8S_LDFLAGS)" -o $$tmp/ \
	  $(addprefix k8s.io/kubernetes/cmd/,$(K8S_CMDS)) ./etcd; \
	rm -rf $(TOOLS_DIR); mv $$tmp $(TOOLS_DIR); touch $(TOOLS_DIR)/.built

.PHONY: crossplane-cli
crossplane-cli: $(CRANK_DIR)/.built ## Build the Crossplane CLI (crank) from Go modules (cached).

$(CRANK_DIR)/.built:
	@echo "building the Crossplane CLI $(CROSSPLANE_VERSION) into $(CRANK_DIR) (once)"
	@mkdir -p $(CACHE_DIR); tmp=$$(mktemp -d $(CACHE_DIR)/build.XXXXXX); \
	cd hack/crank && CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w" -o $$tmp/crossplane github.com/crossplane/crossplane/v2/cmd/crank; \
	rm -rf $(CRANK_DIR); mv $$tmp $(CRANK_DIR); touch $(CRANK_DIR)/.built

.PHONY: cloud-sql-proxy
cloud-sql-proxy: $(PROXY_DIR)/.built ## Build the Cloud SQL Auth Proxy release that hack/proxy/go.mod pins (cached) and print its path.
	@echo "$(CLOUD_SQL_PROXY)"

$(PROXY_DIR)/.built:
	@echo "building the Cloud SQL Auth Proxy $(PROXY_VERSION) into $(PROXY_DIR) (once)"
	@mkdir -p $(CACHE_DIR); tmp=$$(mktemp -d $(CACHE_DIR)/build.XXXXXX); \
	cd hack/proxy && CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w" -o $$tmp/cloud-sql-proxy github.com/GoogleCloudPlatform/cloud-sql-proxy/v2; \
	rm -rf $(PROXY_DIR); mv $$tmp $(PROXY_DIR); touch $(PROXY_DIR)/.built

# The emulator's data plane runs Debian's PostgreSQL server. Installed with apt when
# missing (the machines run as root); anything else is an error that says what to do.
PG_BINDIR = $(firstword $(wildcard /usr/lib/postgresql/*/bin/initdb))
.PHONY: postgres
postgres: ## Make sure PostgreSQL's server (Debian's postgresql-15) is installed, with apt if it is not.
	@if [ -n "$(PG_BINDIR)" ]; then echo "PostgreSQL server: $(dir $(PG_BINDIR))"; exit 0; fi; \
	if ! command -v apt-get >/dev/null; then \
	  echo "PostgreSQL's server is missing and there is no apt-get: install PostgreSQL 15 (initdb, postgres, psql) yourself"; exit 1; fi; \
	sudo=""; if [ "$$(id -u)" != 0 ]; then sudo="sudo"; fi; \
	echo "installing PostgreSQL's server with apt (postgresql-15)"; \
	export DEBIAN_FRONTEND=noninteractive; \
	$$sudo apt-get update -qq && { $$sudo apt-get install -y -qq --no-install-recommends postgresql-15 || $$sudo apt-get install -y -qq --no-install-recommends postgresql; } \
	  || { echo "cannot install PostgreSQL's server with apt: install postgresql-15 (initdb, postgres, psql) and run make again"; exit 1; }; \
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { echo "apt installed PostgreSQL but no /usr/lib/postgresql/*/bin/initdb appeared"; exit 1; }

.PHONY: xpkg
xpkg: crossplane-cli ## Build provider-cloudsql-postgres.xpkg and function-cloudsql-postgres.xpkg into _output/ (no Docker needed).
	$(GO) run ./hack/xpkg --out _output

.PHONY: build
build: ## Build the commands into bin/.
	@mkdir -p $(BIN_DIR)
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN_DIR)/ ./cmd/...

.PHONY: staticcheck
staticcheck: $(LINT_DIR)/.built ## Build staticcheck and goimports, the releases hack/lint/go.mod pins (cached).

$(LINT_DIR)/.built:
	@echo "building staticcheck $(STATICCHECK_VERSION) and goimports into $(LINT_DIR) (once)"
	@mkdir -p $(CACHE_DIR); tmp=$$(mktemp -d $(CACHE_DIR)/build.XXXXXX); \
	cd hack/lint && CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w" -o $$tmp/ honnef.co/go/tools/cmd/staticcheck golang.org/x/tools/cmd/goimports; \
	rm -rf $(LINT_DIR); mv $$tmp $(LINT_DIR); touch $(LINT_DIR)/.built

# Every Go file, for the gofmt, goimports (generated ones excepted) and license-header checks.
GO_FILES = $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')
.PHONY: lint
lint: staticcheck ## go vet, staticcheck (checks in staticcheck.conf; with the e2e and node tags too), gofmt, goimports and license-header checks.
	$(GO) vet ./...
	$(GO) vet -tags e2e ./internal/testing/e2e/
	$(GO) vet -tags node ./internal/testing/nodee2e/ ./internal/testing/nodetest/...
	$(STATICCHECK) ./...
	$(STATICCHECK) -tags e2e ./internal/testing/e2e/
	$(STATICCHECK) -tags node ./internal/testing/nodee2e/ ./internal/testing/nodetest/...
	@out=$$(gofmt -l $(GO_FILES)); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	@out=$$($(GOIMPORTS) -local $(MODULE) -l $$(echo $(GO_FILES) | tr ' ' '\n' | grep -v '/zz_generated\.')); \
	if [ -n "$$out" ]; then echo "goimports would change (imports in three groups: standard library, other modules, $(MODULE)):"; echo "$$out"; exit 1; fi
	@out=$$(for f in $(GO_FILES); do head -n 30 "$$f" | grep -q 'Licensed under the Apache License, Version 2.0' || echo "$$f"; done); \
	if [ -n "$$out" ]; then echo "these Go files lack the license header (copy hack/boilerplate.go.txt to their top, after any //go:build line):"; echo "$$out"; exit 1; fi
	@# git grep -I -L lists every file it reads as text (the pattern matches nothing); whatever else is tracked is binary.
	@out=$$(comm -23 <(git ls-files | sort) <(git grep -I -L -E 'a^' | sort)); \
	if [ -n "$$out" ]; then echo "binary files are tracked (build output belongs in bin/, _output/ or .cache/, which .gitignore covers; git rm --cached them):"; echo "$$out"; exit 1; fi

# -short: a package's TestMain starts no control plane, and each test that needs
# one (or PostgreSQL, the proxy or the Crossplane CLI) skips and says so. The
# integration folders hold only suites that need a control plane: linking their
# test binaries just to skip every test is left out (make lint still vets them).
.PHONY: unit
unit: ## Every test that needs no control plane, PostgreSQL, proxy or Crossplane CLI (go test -short): seconds, nothing to build first.
	$(GO) test -short $(GO_TEST_FLAGS) $$($(GO) list ./... | grep -v '/integration$$')

.PHONY: test
test: control-plane crossplane-cli cloud-sql-proxy postgres check-generated lint ## Run every test against a real kube-apiserver and the Cloud SQL emulator, then the end-to-end test.
	@# -timeout: go test's default, 10 minutes a package, is a guard against a hang, and
	@# the soak package's two runs (failover, then the short soak) take close to it on 2 busy cores.
	$(GO) test -timeout 30m $(GO_TEST_FLAGS) ./...
	@echo "the controller's tests again, observing with instances.get ([reconcile] observe = \"get\")"
	@# -count=1: go test's cache does not see OBSERVE, which a package variable reads.
	OBSERVE=get $(GO) test -count=1 $(GO_TEST_FLAGS) ./internal/controller/...
	$(GO) test -race $(GO_TEST_FLAGS) ./internal/emulator/... ./internal/clients/...
	$(MAKE) --no-print-directory conformance
	$(MAKE) --no-print-directory e2e
	@if ! why=$$($(GO) run ./hack/nodecheck); then \
	  echo "node-e2e (injected pods on a real kubelet) does not run on this machine: $$why"; \
	elif ! $(MAKE) --no-print-directory node-deps; then \
	  echo "node-e2e (injected pods on a real kubelet) does not run on this machine: its packages are missing (see above)"; \
	else $(MAKE) --no-print-directory node-e2e; fi

.PHONY: conformance
conformance: ## Replay the recorded real Cloud SQL traffic (../shared/cloudsql-recorded) against the emulator and print how it compares.
	$(GO) test -count=1 -v -run '^TestRecordedTraffic$$' $(GO_TEST_FLAGS) ./internal/emulator/conformance/

.PHONY: e2e
e2e: control-plane cloud-sql-proxy postgres ## The injected pod connects: provider, webhooks, emulator with PostgreSQL, the real proxy and psql.
	$(GO) test -tags e2e -count=1 -v -timeout 15m $(GO_TEST_FLAGS) ./internal/testing/e2e/

# containerd, runc and the CNI plugins run the node's pods; busybox-static and
# PostgreSQL's client go into the images the node tests build (nothing is pulled).
# What is missing is found by its files, not by package names (Docker's
# containerd.io provides containerd too), and apt never removes a package for
# them (--no-remove): on a machine where that would be needed, node-deps fails
# and says so.
NODE_DEPS := containerd:containerd runc:runc /usr/lib/cni/bridge:containernetworking-plugins /bin/busybox:busybox-static psql:postgresql-client
.PHONY: node-deps
node-deps: ## Install what the node tests need with apt (containerd, runc, the CNI plugins, busybox-static, psql), removing nothing.
	@missing=""; for d in $(NODE_DEPS); do f=$${d%%:*}; p=$${d##*:}; \
	  if [ "$${f#/}" != "$$f" ]; then [ -e "$$f" ] || missing="$$missing $$p"; else command -v "$$f" >/dev/null || missing="$$missing $$p"; fi; done; \
	if [ -n "$$missing" ]; then \
	  command -v apt-get >/dev/null || { echo "the node tests need$$missing, and there is no apt-get: install them yourself"; exit 1; }; \
	  sudo=""; if [ "$$(id -u)" != 0 ]; then sudo="sudo"; fi; \
	  echo "installing$$missing with apt"; export DEBIAN_FRONTEND=noninteractive; \
	  $$sudo apt-get update -qq && $$sudo apt-get install -y -qq --no-install-recommends --no-remove $$missing \
	    || { echo "cannot install$$missing with apt without removing other packages: install them yourself, then run make node-e2e"; exit 1; }; \
	fi

.PHONY: node-e2e
node-e2e: control-plane cloud-sql-proxy postgres node-deps ## Injected pods on a real kubelet (root): containerd, CNI, native and classic sidecars, psql through the real proxy.
	@# The images' tests need root and node-deps' packages too: they run here, not in go test ./...
	$(GO) test -tags node -count=1 $(GO_TEST_FLAGS) ./internal/testing/nodetest/...
	$(GO) test -tags node -count=1 -v -timeout 15m $(GO_TEST_FLAGS) ./internal/testing/nodee2e/

.PHONY: bench
bench: control-plane crossplane-cli ## Run the benchmarks and print their figures.
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Each fuzz target as package:target; `go test -fuzz` takes one package and one target
# at a time. `make test` runs their seed corpora only.
FUZZTIME ?= 30s
FUZZ_TARGETS := ./internal/clients/cloudsql:FuzzSpecRoundTrip ./internal/configfile:FuzzParse ./internal/webhook/podinject:FuzzMutate
.PHONY: fuzz
fuzz: ## Run each fuzz target for FUZZTIME (default 30s) beyond its seeds; a failing input lands in the package's testdata/fuzz.
	@for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; name=$${t##*:}; \
	  echo "fuzzing $$name in $$pkg for $(FUZZTIME)"; \
	  $(GO) test -run='^$$' -fuzz="^$$name\$$" -fuzztime=$(FUZZTIME) $(GO_TEST_FLAGS) $$pkg || exit 1; \
	done

.PHONY: fleet-bench
fleet-bench: control-plane ## A fleet of 1,000 instances with 5 databases and 5 users each in one project under the 180/min quota, both observe modes: requests by method, 429s, staleness, reverts, RSS (FLEET_FLAGS for more).
	$(GO) run ./hack/fleetbench $(FLEET_FLAGS)

SOAK_N ?= 50

.PHONY: soak
soak: control-plane postgres ## The provider SIGKILLed every 5-20 s while SOAK_N instances (default 50) are created, changed, imported and deleted, and users and databases made on 3 more that run PostgreSQL, and instances recovered from them, under faults and the quota: prints what went wrong (all zero).
	$(GO) run ./hack/soak -instances $(SOAK_N)

.PHONY: demo
demo: control-plane cloud-sql-proxy postgres ## Run a local control plane with the CRDs and examples applied (Ctrl-C stops it).
	$(GO) run ./hack/demo $(DEMO_FLAGS)

.PHONY: clean
clean: ## Remove build output (the tool cache stays; `make clean-cache` removes it).
	rm -rf $(BIN_DIR) _output

.PHONY: clean-cache
clean-cache: ## Remove the cached control-plane binaries, Crossplane CLI, Cloud SQL Auth Proxy and staticcheck.
	rm -rf $(CACHE_DIR)
