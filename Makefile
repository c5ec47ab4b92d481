# SeatFlow: `make run` starts the embedded stack (nothing to install);
# `make test` starts MariaDB, Redis and RocketMQ on 127.0.0.1 and runs every test.
SHELL := /bin/bash
GO    ?= go
BIN   := bin/seatflow

# Where the tests find the real services that scripts/services.sh starts.
export SEATFLOW_TEST_MYSQL    ?= mysql://seatflow:seatflow@tcp(127.0.0.1:3306)/seatflow
export SEATFLOW_TEST_REDIS    ?= redis://127.0.0.1:6379/0
export SEATFLOW_TEST_ROCKETMQ ?= rocketmq://127.0.0.1:9876
# Redis as operators run it (scripts/redis-topology.sh): a 3+3 Redis Cluster and a Sentinel group.
export SEATFLOW_TEST_REDIS_CLUSTER  ?= redis-cluster://127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003,127.0.0.1:7004,127.0.0.1:7005,127.0.0.1:7006
export SEATFLOW_TEST_REDIS_SENTINEL ?= redis-sentinel://127.0.0.1:7201,127.0.0.1:7202,127.0.0.1:7203/mymaster
# The browser tests leave a screenshot of every console page here.
export SEATFLOW_SCREENSHOTS   ?= $(CURDIR)/testdata/screenshots

.PHONY: run build test test-multihost test-short check generate services services-down cluster cluster-down bench clean

run:
	$(GO) run ./server/cmd/seatflow serve --demo

build:
	$(GO) build -o $(BIN) ./server/cmd/seatflow

generate:
	$(GO) tool templ generate

# The whole suite, against the real services, with the race detector; then,
# alone, the tests that break a shared service: the RocketMQ broker's stop and
# restart, and the Redis Cluster and Sentinel failovers (they would break the
# other packages' tests if they ran beside them); Prometheus with deploy/'s
# rules against a running SeatFlow; the 20,000-seat map once more without
# -race, for a production build's figure; last, the engine contract suite and
# the 15 s timeout chain once more with the seats on Redis Cluster and on
# Sentinel.
test: services check
	$(GO) test -race -count=1 -timeout 40m $$($(GO) list ./... | grep -v '/core/testenv$$')
	bash scripts/schemathesis.sh
	SEATFLOW_TEST_BROKER_OUTAGE=1 $(GO) test -race -count=1 -timeout 10m -run '^TestBrokerOutage$$' ./server/clustertest
	SEATFLOW_TEST_REDIS_FAILOVER=1 $(GO) test -race -count=1 -timeout 10m -run '^(TestFailover|TestDialEvictionPolicyTopologies)$$' ./core/seats
	SEATFLOW_TEST_REDIS_FAILOVER=1 $(GO) test -race -count=1 -timeout 10m -run '^TestRedisRelayFailover$$' ./server
	SEATFLOW_TEST_REDIS_FAILOVER=1 $(GO) test -race -count=1 -timeout 10m -run '^TestQueueSentinelFailover$$' ./server/clustertest
	SEATFLOW_TEST_PROMETHEUS=1 $(GO) test -race -count=1 -timeout 5m -run '^TestAlertsInPrometheus$$' ./server
	@echo "The 20,000-seat map in a production build (no -race), for its figure against the 1 s target:"
	$(GO) test -count=1 -timeout 5m -run '^TestSeatMap20000InBrowser$$' -v ./server
	$(MAKE) --no-print-directory test-multihost

# On the multi-host topology (no store on 127.0.0.1): the topology's own
# test, RocketMQ topic creation and delivery on a two-master cluster, and the
# engine contract suite with the 15 s timeout chain on Redis Cluster and on
# Sentinel, with MariaDB and both brokers on hosts of their own; last, three
# `seatflow serve` instances on the app hosts under load while a Redis Cluster
# master, the Sentinel master and a broker are killed and an instance is cut
# from the database (it kills stores, so it runs alone).
MULTIHOST_CORE = '^(TestEngineContract|TestTimeoutChainEndToEnd)$$'
MULTIHOST_MQ   = '^(TestNewCreatesTopicsOnEveryMaster|TestNewStartErrors|TestExistingTopicWithCreationOff|TestDelivery)$$'
test-multihost: cluster
	set -a && . ./.cluster/env && set +a && \
	export SEATFLOW_TEST_MYSQL="$$SEATFLOW_CLUSTER_MYSQL" SEATFLOW_TEST_ROCKETMQ="$$SEATFLOW_CLUSTER_ROCKETMQ" \
	  SEATFLOW_TEST_ROCKETMQ_CLUSTER="$$SEATFLOW_CLUSTER_ROCKETMQ_CLUSTER" && \
	$(GO) test -race -count=1 -timeout 5m ./core/testenv && \
	$(GO) test -race -count=1 -timeout 5m -run $(MULTIHOST_MQ) ./core/delay/rocketmq && \
	SEATFLOW_TEST_REDIS="$$SEATFLOW_CLUSTER_REDIS_CLUSTER" $(GO) test -race -count=1 -timeout 10m -run $(MULTIHOST_CORE) ./core && \
	SEATFLOW_TEST_REDIS="$$SEATFLOW_CLUSTER_REDIS_SENTINEL" $(GO) test -race -count=1 -timeout 10m -run $(MULTIHOST_CORE) ./core && \
	SEATFLOW_TEST_CLUSTER_FAULTS=1 $(GO) test -race -count=1 -timeout 10m -run '^TestClusterFaults$$' ./server/clustertest
	bash scripts/cluster.sh down

# Only what runs without services (the real-stack tests skip).
test-short:
	env -u SEATFLOW_TEST_MYSQL -u SEATFLOW_TEST_REDIS -u SEATFLOW_TEST_ROCKETMQ \
	  -u SEATFLOW_TEST_REDIS_CLUSTER -u SEATFLOW_TEST_REDIS_SENTINEL $(GO) test -count=1 ./...

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
	bash scripts/redis-topology.sh up

services-down:
	bash scripts/redis-topology.sh down
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
