# eso — one static binary: Kubernetes secrets operator (core) or provider service.
#
#   make demo   local control plane + eso in core mode + example secrets synced
#   make test   unit and integration tests (real kube-apiserver + etcd), with -race
#   make e2e    eso's own image as Pods on a real single-node cluster (as root)
#
# Everything a target needs is built from the Go module proxy and cached under
# $(CACHE_DIR), keyed by version, so a fresh clone reuses it.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

CACHE_DIR ?= $(HOME)/.cache/eso
GO ?= go
TAGS ?=
# Read from git once (:=), not at every use: a recipe running while HEAD
# moves must not name two versions.
VERSION ?= $(eval VERSION := $$(shell git describe --tags --always --dirty 2>/dev/null || echo dev))$(VERSION)
COMMIT ?= $(eval COMMIT := $$(shell git rev-parse --short HEAD 2>/dev/null || echo unknown))$(COMMIT)
LDFLAGS := -s -w -X github.com/eso-dev/eso/app/version.Version=$(VERSION) -X github.com/eso-dev/eso/app/version.Commit=$(COMMIT)

# The versions build/envtest's go.mod pins (build/envtest/kube.sh reads the same line).
K8S_VERSION := $(shell sed -n 's/^\tk8s.io\/kubernetes //p' build/envtest/go.mod)
ETCD_VERSION := $(shell sed -n 's/^\tgo.etcd.io\/etcd\/server\/v3 //p' build/envtest/go.mod)
ENVTEST_DIR := $(CACHE_DIR)/envtest-k8s-$(K8S_VERSION)-etcd-$(ETCD_VERSION)
COREDNS_VERSION := v1.14.7
NODE_DIR := $(CACHE_DIR)/node-k8s-$(K8S_VERSION)-coredns-$(COREDNS_VERSION)
VAULT_VERSION := v1.21.0
VAULT_DIR := $(CACHE_DIR)/vault-$(VAULT_VERSION)
CONTROLLER_GEN_VERSION := v0.23.0
CONTROLLER_GEN := $(CACHE_DIR)/tools/controller-gen-$(CONTROLLER_GEN_VERSION)/controller-gen
PROTOC_GEN_GO_VERSION := v1.36.12
PROTOC_GEN_GO := $(CACHE_DIR)/tools/protoc-gen-go-$(PROTOC_GEN_GO_VERSION)/protoc-gen-go
PROTOC_GEN_GO_GRPC_VERSION := v1.6.2
PROTOC_GEN_GO_GRPC := $(CACHE_DIR)/tools/protoc-gen-go-grpc-$(PROTOC_GEN_GO_GRPC_VERSION)/protoc-gen-go-grpc
HELM_VERSION := v3.22.0
HELM := $(CACHE_DIR)/tools/helm-$(HELM_VERSION)/helm
CYCLONEDX_VERSION := v1.10.0
CYCLONEDX := $(CACHE_DIR)/tools/cyclonedx-gomod-$(CYCLONEDX_VERSION)/cyclonedx-gomod
PROTOS := $(wildcard apis/proto/*/v*/*.proto)

BIN_DIR ?= bin
BIN := $(BIN_DIR)/eso

export CGO_ENABLED := 0

##@ General

# The variables the help texts name, printed with their values.
HELP_VARS := VAULT_VERSION K8S_VERSION ETCD_VERSION HELM_VERSION CACHE_DIR

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST) \
		| sed $(foreach v,$(HELP_VARS),-e 's|\$$($(v))|$($(v))|g')

##@ Main jobs

.PHONY: demo
demo: build envtest ## Start a local control plane, run eso, sync the examples and print the Secrets (DEMO_KEEP=1 keeps it running).
	KUBEBUILDER_ASSETS=$(ENVTEST_DIR) ESO_BIN=$(BIN) build/demo/demo.sh

.PHONY: test
test: envtest vault verify moto $(HELM) $(CYCLONEDX) ## Run unit and integration tests with -race against a real kube-apiserver + etcd, moto, a Vault dev server and helm.
	CGO_ENABLED=1 KUBEBUILDER_ASSETS=$(ENVTEST_DIR) VAULT_BIN=$(VAULT_DIR)/vault HELM_BIN=$(HELM) $(GO) test -race -count=1 -parallel 64 -timeout 20m ./...
	cd examples/provider-inmemory && CGO_ENABLED=1 $(GO) test -race -count=1 ./...

# The Debian packages a node runs on: the container runtime, the CNI
# plugins, and what the kubelet and kube-proxy call.
NODE_PACKAGES := containerd runc containernetworking-plugins iptables iproute2 conntrack

# The upgrade tests move between the bundle's image and this one: the same
# code built as another version.
E2E_NEXT_VERSION := $(VERSION)-next
# E2E_RUN picks tests by name, as go test -run (E2E_RUN=TestShardedReplicas); empty runs them all.
E2E_RUN ?=
HOST_ARCH := $(shell $(GO) env GOARCH)

.PHONY: e2e
e2e: bundle envtest node $(HELM) ## Run the end-to-end tests as root: a single-node cluster (containerd, kubelet, kube-proxy; no network beyond this machine), eso installed from the bundle.
	@[ "$$(id -u)" = 0 ] || { echo "make e2e runs containerd, a kubelet and a bridge: run it as root"; exit 1; }
	$(MAKE) --no-print-directory image VERSION=$(E2E_NEXT_VERSION) IMAGE_ARCHS=$(HOST_ARCH) IMAGE_DIR=$(DIST)/image-next
	KUBEBUILDER_ASSETS=$(ENVTEST_DIR) ESO_NODE_BIN=$(NODE_DIR) HELM_BIN=$(HELM) ESO_BUNDLE=$(abspath $(BUNDLE)) \
		ESO_NEXT_IMAGE=$(abspath $(DIST)/image-next/eso-$(E2E_NEXT_VERSION)-linux-$(HOST_ARCH).tar) ESO_NEXT_TAG=$(E2E_NEXT_VERSION) \
		$(GO) test -tags e2e -count=1 -v -timeout 30m $(if $(E2E_RUN),-run '$(E2E_RUN)') ./tests/e2e/

.PHONY: bench
bench: build envtest ## Benchmark bin/eso as its own process: sync time, RSS, CPU, steady-state writes (BENCH_FLAGS="-namespaces 10"; -h lists flags).
	GO=$(GO) KUBEBUILDER_ASSETS=$(ENVTEST_DIR) $(GO) run ./tests/bench -eso $(BIN) $(BENCH_FLAGS)

FUZZTIME ?= 60s

.PHONY: fuzz
fuzz: envtest ## Run every Go fuzz target for FUZZTIME each (FUZZTIME=10m); make test runs their seed corpora.
	@for file in $$(git grep -l '^func Fuzz' -- '*_test.go'); do \
		pkg=./$$(dirname $$file); \
		for target in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$file); do \
			echo "== $$pkg $$target ($(FUZZTIME))"; \
			KUBEBUILDER_ASSETS=$(ENVTEST_DIR) $(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

##@ Development

.PHONY: build
build: ## Build bin/eso (TAGS=aws,vault selects providers; default: all).
	$(GO) build -trimpath -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN) .

# The image: linux binaries for each architecture, built reproducibly (no
# build ID, trimmed paths), then a from-scratch OCI image around them.
IMAGE_REPOSITORY ?= ghcr.io/eso-dev/eso
IMAGE_ARCHS ?= amd64 arm64
IMAGE_TAG ?= $(VERSION)$(if $(TAGS),-$(subst $(comma),-,$(TAGS)))
IMAGE_DIR ?= $(DIST)/image
comma := ,
SOURCE_DATE_EPOCH ?= $(eval SOURCE_DATE_EPOCH := $$(shell git log -1 --format=%ct 2>/dev/null || echo 0))$(SOURCE_DATE_EPOCH)

IMAGE_BINARIES = $(foreach arch,$(IMAGE_ARCHS),$(BIN_DIR)/linux-$(arch)/eso)
IMAGE_LAYOUT = $(IMAGE_DIR)/eso-$(IMAGE_TAG)-oci/index.json
IMAGE_ARCHIVES = $(foreach arch,$(IMAGE_ARCHS),$(IMAGE_DIR)/eso-$(IMAGE_TAG)-linux-$(arch).tar)

.PHONY: image
image: $(IMAGE_LAYOUT) $(IMAGE_ARCHIVES) ## Write eso's OCI image (linux/amd64 + linux/arm64) to dist/image: an OCI layout and a docker-archive per arch (TAGS=aws,vault selects providers); only what changed is rebuilt.
	@echo "image $(IMAGE_REPOSITORY):$(IMAGE_TAG) ($(IMAGE_ARCHS)) in $(IMAGE_DIR)"

# make image rebuilds only what its inputs changed: a binary when a Go
# source, go.mod/go.sum or its build flags changed (a binary without build
# ID gives go build no way to tell), the image when a binary or the image's
# settings did.
GO_SOURCES := $(shell find . \( -path ./.git -o -path ./dist -o -path ./bin -o -path ./examples -o -path ./tests -o -path ./build \) -prune -o \
	-type f \( \( -name '*.go' ! -name '*_test.go' \) -o -name go.mod -o -name go.sum -o -path './apis/crds/*.yaml' \) -print)
IMAGE_GOFLAGS = -trimpath -tags '$(TAGS)' -ldflags '$(LDFLAGS) -buildid='

$(BIN_DIR)/linux-%/eso: $(GO_SOURCES) $(BIN_DIR)/linux-%/build-flags
	GOOS=linux GOARCH=$* $(GO) build $(IMAGE_GOFLAGS) -o $@ .

$(BIN_DIR)/linux-%/build-flags: export ESO_STAMP = GOOS=linux GOARCH=$* $(GO) build $(IMAGE_GOFLAGS)
$(BIN_DIR)/linux-%/build-flags: FORCE
	@$(write-stamp)
# Kept: make would delete it as an intermediate file, losing what was built.
.PRECIOUS: $(BIN_DIR)/linux-%/build-flags

$(IMAGE_LAYOUT) $(IMAGE_ARCHIVES) &: $(IMAGE_BINARIES) $(IMAGE_DIR)/.eso-$(IMAGE_TAG)-settings build/image/main.go go.mod go.sum
	$(GO) run ./build/image -out $(IMAGE_DIR) -repository $(IMAGE_REPOSITORY) -tag $(IMAGE_TAG) \
		-version $(VERSION) -commit $(COMMIT) -tags '$(TAGS)' -created $(SOURCE_DATE_EPOCH) \
		$(foreach arch,$(IMAGE_ARCHS),-binary $(arch)=$(BIN_DIR)/linux-$(arch)/eso)

$(IMAGE_DIR)/.eso-$(IMAGE_TAG)-settings: export ESO_STAMP = $(IMAGE_REPOSITORY) $(IMAGE_TAG) $(VERSION) $(COMMIT) $(TAGS) $(SOURCE_DATE_EPOCH) $(IMAGE_BINARIES)
$(IMAGE_DIR)/.eso-$(IMAGE_TAG)-settings: FORCE
	@$(write-stamp)

# write-stamp writes $ESO_STAMP to the target only when it differs from what
# the file holds, so the file is newer than what depends on it only after a
# change.
define write-stamp
mkdir -p $(@D); printf '%s\n' "$$ESO_STAMP" | cmp -s - $@ || printf '%s\n' "$$ESO_STAMP" > $@
endef

.PHONY: FORCE
FORCE:

DIST ?= dist
MANIFEST_NAMESPACE ?= eso-system
INSTALL_FILE := $(DIST)/eso-$(VERSION)-install.yaml
BUNDLE := $(DIST)/eso-$(VERSION)-bundle.tar.gz

.PHONY: manifests
manifests: $(HELM) ## Write the whole install as one file, rendered from charts/eso (MANIFEST_NAMESPACE=eso-system; MANIFEST_ARGS="--set ..." for more values).
	mkdir -p $(DIST)
	build/manifests.sh $(HELM) $(IMAGE_REPOSITORY) $(IMAGE_TAG) $(MANIFEST_NAMESPACE) $(MANIFEST_ARGS) > $(INSTALL_FILE)
	@echo $(INSTALL_FILE)

# The charts' appVersion in the tree is a placeholder; packaged, it is the
# tag make image writes, so an install needs no image.tag (the bundle's
# charts are packaged the same way).
.PHONY: charts
charts: $(HELM) ## Package charts/eso and charts/eso-provider into dist/charts, their appVersion (the default image tag) the tag make image writes.
	mkdir -p $(DIST)/charts
	for chart in charts/eso charts/eso-provider; do \
		$(HELM) package $$chart --app-version $(IMAGE_TAG) --destination $(DIST)/charts; \
	done

# The bundle's install file never pulls: its image comes in the bundle.
BUNDLE_INSTALL_FILE := $(DIST)/eso-$(VERSION)-airgapped-install.yaml

.PHONY: bundle
bundle: image $(HELM) $(CYCLONEDX) ## Write dist/eso-<version>-bundle.tar.gz: images (both arches), charts, install file (image.airgapped=true), images.txt, SBOMs, SHA256SUMS.
	mkdir -p $(DIST)
	build/manifests.sh $(HELM) $(IMAGE_REPOSITORY) $(IMAGE_TAG) $(MANIFEST_NAMESPACE) --set image.airgapped=true > $(BUNDLE_INSTALL_FILE)
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) build/bundle.sh $(BUNDLE) $(VERSION) $(IMAGE_DIR) $(IMAGE_REPOSITORY):$(IMAGE_TAG) \
		$(BUNDLE_INSTALL_FILE) $(HELM) $(CYCLONEDX) $(BIN_DIR) '$(IMAGE_ARCHS)'

.PHONY: sizes
sizes: ## Print binary size and linked module count for each build-tag selection.
	build/sizes.sh

.PHONY: generate
generate: $(CONTROLLER_GEN) protoc-tools ## Regenerate deepcopy code and CRDs from apis/, eso's ClusterRole from app/manager/rbac.go and the chart's copies of both, the gRPC code from apis/proto and the provider wiring and the configuration kinds' RBAC from providers/catalog.
	$(CONTROLLER_GEN) object paths=./apis/...
	rm -f apis/crds/*.yaml
	$(CONTROLLER_GEN) crd:maxDescLen=512 paths=./apis/... output:crd:artifacts:config=apis/crds
	rm -f charts/eso/files/crds/*.yaml && cp apis/crds/*.yaml charts/eso/files/crds/
	$(GO) run ./build/wiring
	$(CONTROLLER_GEN) rbac:roleName=eso-core paths=./app/manager/... output:rbac:dir=charts/eso/files/rbac
	$(CONTROLLER_GEN) rbac:roleName=eso-provider paths=./app/providermode/... output:rbac:dir=charts/eso-provider/files/rbac
	$(GO) run ./build/rbacdoc
	protoc --plugin=protoc-gen-go=$(PROTOC_GEN_GO) --plugin=protoc-gen-go-grpc=$(PROTOC_GEN_GO_GRPC) \
		--go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative $(PROTOS)

.PHONY: protoc-tools
protoc-tools: $(PROTOC_GEN_GO) $(PROTOC_GEN_GO_GRPC) ## Install protoc (Debian package) and the Go plugins (cached).
	@command -v protoc >/dev/null || { echo "installing protoc (Debian protobuf-compiler)"; \
		if [ "$$(id -u)" = 0 ]; then apt-get install -y -qq protobuf-compiler >/dev/null || { apt-get update -qq && apt-get install -y -qq protobuf-compiler >/dev/null; }; \
		else sudo apt-get install -y -qq protobuf-compiler >/dev/null; fi; }

$(PROTOC_GEN_GO):
	GOBIN=$(dir $(PROTOC_GEN_GO)) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)

$(PROTOC_GEN_GO_GRPC):
	GOBIN=$(dir $(PROTOC_GEN_GO_GRPC)) $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)

# GENERATED are the folders make generate writes.
GENERATED := apis charts/eso/files charts/eso-provider/files app/wiring app/manager/zz_generated.rbac.go app/providermode/zz_generated.rbac.go README.md

.PHONY: verify
verify: generate ## Fail when generated code is stale, code is not gofmt-clean, go vet complains or go.mod is not tidy.
	@if [ -n "$$(git status --porcelain -- $(GENERATED))" ]; then \
		echo "generated code in $(GENERATED) is stale: run 'make generate' and commit the result"; \
		git status --porcelain -- $(GENERATED); git diff --stat -- $(GENERATED); exit 1; fi
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then \
		echo "gofmt needed on: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags e2e ./tests/e2e/
	@$(GO) mod tidy -diff >/dev/null || { echo "go.mod/go.sum are not tidy: run 'go mod tidy' and commit the result"; exit 1; }
	cd examples/provider-inmemory && $(GO) vet ./... && { $(GO) mod tidy -diff >/dev/null || { echo "examples/provider-inmemory: go.mod/go.sum are not tidy: run 'go mod tidy' there and commit the result"; exit 1; }; }

.PHONY: moto
moto: ## Check that moto_server (the AWS API emulator the AWS provider tests run) is installed.
	@command -v moto_server >/dev/null || { echo "moto_server not found: install it with: pip install 'moto[server]'"; exit 1; }

.PHONY: envtest
envtest: $(ENVTEST_DIR)/kube-apiserver ## Build kube-apiserver, etcd and kubectl from Go modules (cached).

$(ENVTEST_DIR)/kube-apiserver:
	build/envtest/build.sh $(ENVTEST_DIR)

.PHONY: vault
vault: $(VAULT_DIR)/vault ## Build a Vault $(VAULT_VERSION) server from Go modules for the Vault provider tests (cached, ~12 min cold).

$(VAULT_DIR)/vault:
	build/vault/build.sh $(VAULT_DIR)

.PHONY: node
node: $(NODE_DIR)/coredns ## Install a node's Debian packages (containerd, runc, CNI plugins, iptables) and build kubelet, kube-proxy, kube-controller-manager, kube-scheduler and CoreDNS from Go modules (cached).
	@missing=$$(for p in $(NODE_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then echo "installing $$missing (Debian)"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; }; fi

$(NODE_DIR)/coredns:
	build/node/build.sh $(NODE_DIR)

$(CONTROLLER_GEN):
	GOBIN=$(dir $(CONTROLLER_GEN)) $(GO) install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)

.PHONY: helm
helm: $(HELM) ## Build helm from Go modules into the tool cache.

$(HELM):
	GOBIN=$(dir $(HELM)) $(GO) install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)

$(CYCLONEDX):
	GOBIN=$(dir $(CYCLONEDX)) $(GO) install github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@$(CYCLONEDX_VERSION)

.PHONY: clean
clean: ## Remove build outputs, bin/ and dist/ (the tool cache under CACHE_DIR stays).
	rm -rf $(BIN_DIR) $(DIST)
