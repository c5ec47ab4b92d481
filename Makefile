# SeatFlow: `make run` starts the embedded stack (nothing to install);
# `make test` starts MariaDB, Redis and RocketMQ on 127.0.0.1 and runs every test.
SHELL := /bin/bash
GO    ?= go
BIN   := bin/seatflow

# Where the tests find the real services that scripts/services.sh starts.
export SEATFLOW_TEST_MYSQL    ?= mysql://seatflow:seatflow@tcp(127.0.0.1:3306)/seatflow
export SEATFLOW_TEST_REDIS    ?= redis://127.0.0.1:6379/0
export SEATFLOW_TEST_ROCKETMQ ?= rocketmq://127.0.0.1:9876
# The browser tests leave a screenshot of every console page here.
export SEATFLOW_SCREENSHOTS   ?= $(CURDIR)/testdata/screenshots

.PHONY: run build test test-short check generate services services-down cluster cluster-down bench clean

run:
	$(GO) run ./server/cmd/seatflow serve --demo

build:
	$(GO) build -o $(BIN) ./server/cmd/seatflow

generate:
	$(GO) tool templ generate

# The whole suite, against the real services, with the race detector; then,
# alone, the test that stops and restarts the shared RocketMQ broker (it
# would break the other packages' RocketMQ tests if it ran beside them).
test: services check
	$(GO) test -race -count=1 -timeout 40m ./...
	SEATFLOW_TEST_BROKER_OUTAGE=1 $(GO) test -race -count=1 -timeout 10m -run '^TestBrokerOutage$$' ./server/clustertest

# Only what runs without services (the real-stack tests skip).
test-short:
	env -u SEATFLOW_TEST_MYSQL -u SEATFLOW_TEST_REDIS -u SEATFLOW_TEST_ROCKETMQ $(GO) test -count=1 ./...

# gofmt, go vet, staticcheck, and templ output in sync with its sources.
check:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '_templ.go$$')); \
	  if [ -n "$$out" ]; then echo "gofmt needed: $$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	$(GO) tool templ generate
	@if [ -n "$$(git status --porcelain -- '*_templ.go')" ]; then \
	  echo "templ output out of date: run make generate and commit"; git status --porcelain -- '*_templ.go'; exit 1; fi

# govulncheck is not used: it needs the vulnerability database from
# vuln.go.dev, which this network does not reach.
services:
	bash scripts/services.sh up

services-down:
	bash scripts/services.sh down

# Multi-host topology in network namespaces (root): see README "Multi-host test
# topology". Tests read its variables: export $$(scripts/cluster.sh env).
cluster:
	bash scripts/cluster.sh up

cluster-down:
	bash scripts/cluster.sh down

clean:
	rm -rf bin

# Load benchmarks against a server the bench starts itself (see BENCHMARKS.md):
#   make bench                                     everything on the embedded stack
#   make bench BENCH_STACK=real                    on MariaDB, Redis, RocketMQ (make services first)
#   make bench BENCH_SCENARIO=place BENCH_FLAGS='--clients 32 --json'
BENCH_STACK    ?= embedded
BENCH_SCENARIO ?= all
BENCH_FLAGS    ?=
bench: build
	$(BIN) bench $(BENCH_SCENARIO) --stack $(BENCH_STACK) $(BENCH_FLAGS)
