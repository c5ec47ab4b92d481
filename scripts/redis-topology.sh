#!/usr/bin/env bash
# Redis as operators run it, on 127.0.0.1, for the tests:
#   a Redis Cluster of 3 masters + 3 replicas   ports 7001-7006 (cluster bus 17001-17006)
#   a Sentinel group: master 7101, replica 7102, sentinels 7201-7203 (master name mymaster)
#
# Usage:
#   scripts/redis-topology.sh up       start both (fresh data), wait until the cluster is ok and
#                                      the sentinels can fail over; prints the env lines
#   scripts/redis-topology.sh down     stop what this script started (pid files)
#   scripts/redis-topology.sh env      print SEATFLOW_TEST_REDIS_CLUSTER and SEATFLOW_TEST_REDIS_SENTINEL
#   scripts/redis-topology.sh status   one line per server
#
# State (data, logs, pid files): ${SEATFLOW_SERVICES_DIR:-<repo>/.services}/redis-topology
# Uses the redis-server and redis-cli that scripts/services.sh installs. No persistence. DEBUG is
# enabled on the data nodes: the failover tests freeze a master with DEBUG SLEEP (a hung host, as
# far as its peers and clients can tell), and it rejoins as a replica when it wakes, so the
# topology is whole again for the next run.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=${SEATFLOW_SERVICES_DIR:-$REPO/.services}/redis-topology
TIMEOUT=${SEATFLOW_SERVICES_TIMEOUT:-120}
HOST=127.0.0.1
CLUSTER_PORTS=(7001 7002 7003 7004 7005 7006)
SENTINEL_DATA_PORTS=(7101 7102) # master, replica
SENTINEL_PORTS=(7201 7202 7203)
MASTER_NAME=mymaster
# Short timeouts so a failover takes seconds: a master silent for 2 s (cluster) or 1 s (sentinel)
# is taken as dead.
CLUSTER_NODE_TIMEOUT=2000
SENTINEL_DOWN_AFTER=1000

log() { printf '[redis-topology %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

alive() {
    local state
    state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
    [[ -n $state && $state != Z ]]
}

# pid_of PORT: the pid of our server on PORT, if it runs (a reused pid does not count).
pid_of() {
    local file=$DIR/$1/redis.pid pid
    [[ -s $file ]] || return 1
    pid=$(tr -dc '0-9' <"$file")
    [[ -n $pid ]] && alive "$pid" || return 1
    # Redis rewrites its process title, but it runs in its own directory.
    [[ $(readlink "/proc/$pid/cwd" 2>/dev/null) == "$DIR/$1" ]] || return 1
    echo "$pid"
}

listening() { [[ -n $(ss -Hltn "sport = :$1" 2>/dev/null) ]]; }

cli() { local port=$1; shift; redis-cli -h "$HOST" -p "$port" "$@" 2>/dev/null; }

# start PORT ARGS...: redis-server detached, with its state in $DIR/PORT.
start() {
    local port=$1; shift
    local d=$DIR/$port
    if pid_of "$port" >/dev/null; then return 0; fi
    listening "$port" && die "port $port is already in use by another process"
    rm -rf "$d" && mkdir -p "$d"
    printf 'port %s\nbind %s\ndir %s\npidfile %s\nlogfile %s\n' "$port" "$HOST" "$d" "$d/redis.pid" "$d/redis.log" >"$d/redis.conf"
    printf '%s\n' "$@" >>"$d/redis.conf"
    setsid nohup redis-server "$d/redis.conf" ${SENTINEL:+--sentinel} >"$d/out" 2>&1 </dev/null 9>&- &
    echo $! >"$d/redis.pid"
}

# wait_until WHAT CMD...: poll CMD until it succeeds, or fail with the logs after TIMEOUT.
wait_until() {
    local what=$1; shift
    local deadline=$((SECONDS + TIMEOUT)) p
    until "$@" >/dev/null 2>&1; do
        if ((SECONDS >= deadline)); then
            for p in "${CLUSTER_PORTS[@]}" "${SENTINEL_DATA_PORTS[@]}" "${SENTINEL_PORTS[@]}"; do
                [[ -s $DIR/$p/redis.log ]] && { echo "---- $p" >&2; tail -n 15 "$DIR/$p/redis.log" >&2; }
            done
            die "$what not ready after ${TIMEOUT}s"
        fi
        sleep 0.3
    done
}

data_node_conf=(
    "protected-mode no" "save ''" "appendonly no" "enable-debug-command yes"
)

cluster_ok() {
    local p
    for p in "${CLUSTER_PORTS[@]}"; do
        cli "$p" cluster info | grep -q '^cluster_state:ok' || return 1
    done
    # Three masters and three replicas, each replica in sync with its master.
    [[ $(cli "${CLUSTER_PORTS[0]}" cluster nodes | grep -c master) == 3 ]] || return 1
    [[ $(cli "${CLUSTER_PORTS[0]}" cluster nodes | grep -c slave) == 3 ]] || return 1
}

cluster_up() {
    local p addrs=()
    if cluster_ok; then log "cluster: already running"; return 0; fi
    cluster_down
    for p in "${CLUSTER_PORTS[@]}"; do
        start "$p" "${data_node_conf[@]}" "cluster-enabled yes" "cluster-config-file nodes.conf" \
            "cluster-node-timeout $CLUSTER_NODE_TIMEOUT" "cluster-announce-ip $HOST"
        addrs+=("$HOST:$p")
    done
    for p in "${CLUSTER_PORTS[@]}"; do wait_until "cluster node $p" cli "$p" ping; done
    redis-cli --cluster create "${addrs[@]}" --cluster-replicas 1 --cluster-yes >"$DIR/cluster-create.out" 2>&1 ||
        { cat "$DIR/cluster-create.out" >&2; die "redis-cli --cluster create failed"; }
    wait_until "cluster" cluster_ok
    log "cluster: ready on ${addrs[*]}"
}

sentinel_ok() {
    local p
    for p in "${SENTINEL_PORTS[@]}"; do
        # ckquorum: enough sentinels see each other and the master to agree on a failover.
        cli "$p" sentinel ckquorum "$MASTER_NAME" | grep -q '^OK 3 usable' || return 1
        [[ $(cli "$p" sentinel master "$MASTER_NAME" | awk 'prev == "num-slaves" { print } { prev = $0 }') == 1 ]] || return 1
    done
    cli "${SENTINEL_DATA_PORTS[1]}" info replication | grep -q '^master_link_status:up' ||
        cli "${SENTINEL_DATA_PORTS[0]}" info replication | grep -q '^master_link_status:up'
}

sentinel_up() {
    local p
    if sentinel_ok; then log "sentinel: already running"; return 0; fi
    sentinel_down
    start "${SENTINEL_DATA_PORTS[0]}" "${data_node_conf[@]}"
    start "${SENTINEL_DATA_PORTS[1]}" "${data_node_conf[@]}" "replicaof $HOST ${SENTINEL_DATA_PORTS[0]}"
    for p in "${SENTINEL_DATA_PORTS[@]}"; do wait_until "sentinel data node $p" cli "$p" ping; done
    for p in "${SENTINEL_PORTS[@]}"; do
        SENTINEL=1 start "$p" "protected-mode no" "sentinel resolve-hostnames no" \
            "sentinel monitor $MASTER_NAME $HOST ${SENTINEL_DATA_PORTS[0]} 2" \
            "sentinel down-after-milliseconds $MASTER_NAME $SENTINEL_DOWN_AFTER" \
            "sentinel failover-timeout $MASTER_NAME 10000" \
            "sentinel parallel-syncs $MASTER_NAME 1"
    done
    wait_until "sentinel group" sentinel_ok
    log "sentinel: ready, master $MASTER_NAME on $HOST:${SENTINEL_DATA_PORTS[0]}, sentinels on ${SENTINEL_PORTS[*]}"
}

stop_port() {
    local port=$1 pid i
    pid=$(pid_of "$port") || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do alive "$pid" || break; sleep 0.1; done
    if alive "$pid"; then
        # DEBUG SLEEP (a failover test) defers SIGTERM until the sleep ends.
        kill -KILL "$pid" 2>/dev/null || true
        while alive "$pid"; do sleep 0.1; done
    fi
    rm -f "$DIR/$port/redis.pid"
}

cluster_down() { local p; for p in "${CLUSTER_PORTS[@]}"; do stop_port "$p"; done; }
sentinel_down() { local p; for p in "${SENTINEL_PORTS[@]}" "${SENTINEL_DATA_PORTS[@]}"; do stop_port "$p"; done; }

env_lines() {
    local p cluster=() sentinels=()
    for p in "${CLUSTER_PORTS[@]}"; do cluster+=("$HOST:$p"); done
    for p in "${SENTINEL_PORTS[@]}"; do sentinels+=("$HOST:$p"); done
    echo "SEATFLOW_TEST_REDIS_CLUSTER=redis-cluster://$(IFS=,; echo "${cluster[*]}")"
    echo "SEATFLOW_TEST_REDIS_SENTINEL=redis-sentinel://$(IFS=,; echo "${sentinels[*]}")/$MASTER_NAME"
}

status() {
    local p pid
    for p in "${CLUSTER_PORTS[@]}" "${SENTINEL_DATA_PORTS[@]}" "${SENTINEL_PORTS[@]}"; do
        if pid=$(pid_of "$p"); then
            printf '%s:%-5s running  pid %-8s %s\n' "$HOST" "$p" "$pid" "$(cli "$p" info replication 2>/dev/null | grep -m1 '^role:' | tr -d '\r')"
        else
            printf '%s:%-5s stopped\n' "$HOST" "$p"
        fi
    done
}

main() {
    local cmd=${1:-}
    case $cmd in
        env) env_lines; return ;;
        status) status; return ;;
        up | down) ;;
        *) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; [[ $cmd == help || $cmd == -h ]]; return ;;
    esac
    command -v redis-server >/dev/null && command -v redis-cli >/dev/null ||
        die "redis-server/redis-cli not found: run scripts/services.sh up redis first (it installs them)"
    mkdir -p "$DIR"
    exec 9>"$DIR/.lock"
    flock -w 300 9 || die "another redis-topology.sh run holds $DIR/.lock"
    case $cmd in
        up) cluster_up; sentinel_up; env_lines ;;
        down) sentinel_down; cluster_down; log "stopped" ;;
    esac
}

main "$@"
