// Package testenv finds the real services (MariaDB, Redis, RocketMQ) that
// tests run against. A test that needs one and cannot find it is skipped on
// a developer machine but fails when CI is set: CI must never go green
// without having exercised the real stack.
package testenv

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// Variables naming the real services; `make test` sets them after
// `scripts/services.sh up`.
const (
	MySQLVar    = "SEATFLOW_TEST_MYSQL"    // mysql://user:pass@tcp(127.0.0.1:3306)/seatflow
	RedisVar    = "SEATFLOW_TEST_REDIS"    // redis://127.0.0.1:6379/0
	RocketMQVar = "SEATFLOW_TEST_ROCKETMQ" // rocketmq://127.0.0.1:9876
)

// Variables naming the Redis topologies; `make test` sets them after
// `scripts/redis-topology.sh up`. Tests take every address from them, so they
// run on any topology that provides them.
const (
	RedisClusterVar  = "SEATFLOW_TEST_REDIS_CLUSTER"  // redis-cluster://host1:port1,host2:port2,...
	RedisSentinelVar = "SEATFLOW_TEST_REDIS_SENTINEL" // redis-sentinel://host1:port1,.../master-name
	// RedisFailoverVar=1 enables the tests that disturb those topologies
	// (freeze a master, set an evicting policy): they would fail the other
	// packages' tests using the same topology, so `make test` runs them
	// alone, after the suite.
	RedisFailoverVar = "SEATFLOW_TEST_REDIS_FAILOVER"
)

// RedisCluster returns the Redis Cluster URL or skips/fails the test.
func RedisCluster(t testing.TB) string {
	return needFrom(t, RedisClusterVar, "scripts/redis-topology.sh up")
}

// RedisSentinel returns the Redis Sentinel URL or skips/fails the test.
func RedisSentinel(t testing.TB) string {
	return needFrom(t, RedisSentinelVar, "scripts/redis-topology.sh up")
}

// Binary returns the path of the program name, or skips/fails the test
// when it is not installed (scripts/services.sh installs what tests run).
func Binary(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is not installed: CI must run this test (run scripts/services.sh up)", name)
	}
	t.Skipf("%s is not installed; run scripts/services.sh up to include this test", name)
	return ""
}

// MySQL returns the MariaDB URL or skips/fails the test.
func MySQL(t testing.TB) string { return need(t, MySQLVar) }

// Redis returns the Redis URL or skips/fails the test.
func Redis(t testing.TB) string { return need(t, RedisVar) }

// RocketMQ returns the RocketMQ name server URL or skips/fails the test.
func RocketMQ(t testing.TB) string { return need(t, RocketMQVar) }

// RocketMQClusterVar names the broker cluster of SEATFLOW_TEST_ROCKETMQ when
// it is not DefaultCluster (the multi-host topology's is its own).
const RocketMQClusterVar = "SEATFLOW_TEST_ROCKETMQ_CLUSTER"

// RocketMQCluster is the cluster name to use, "" for the default.
func RocketMQCluster() string { return os.Getenv(RocketMQClusterVar) }

func need(t testing.TB, name string) string {
	t.Helper()
	return needFrom(t, name, "scripts/services.sh up")
}

// needFrom is need with the command that starts the service.
func needFrom(t testing.TB, name, start string) string {
	t.Helper()
	if v := os.Getenv(name); v != "" {
		return v
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is not set: CI must run this test against the real service (run %s)", name, start)
	}
	t.Skipf("%s is not set; run `make test` (it starts the services) to include this test", name)
	return ""
}

// NewMySQLDatabase creates an empty database of the test's own on the MySQL
// server of SEATFLOW_TEST_MYSQL, drops it when the test ends, and returns
// its mysql:// URL.
func NewMySQLDatabase(t testing.TB) string {
	t.Helper()
	cfg, err := mysql.ParseDSN(strings.TrimPrefix(MySQL(t), "mysql://"))
	if err != nil {
		t.Fatalf("parse %s: %v", MySQLVar, err)
	}
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "seatflow_test_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec("DROP DATABASE " + name); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	cfg.DBName = name
	return "mysql://" + cfg.FormatDSN()
}
