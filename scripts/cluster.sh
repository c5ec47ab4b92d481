#!/usr/bin/env bash
# SeatFlow multi-host test topology on this machine: one network namespace per "host", each with its
# own address in 198.18.0.0/24 (a veth into the bridge sfbr0, 198.18.0.1, in the root namespace, so
# tests running in the root namespace reach every host). Nothing listens on 127.0.0.1.
#
#   db  198.18.0.10  MariaDB :3306 (seatflow/seatflow)
#   rc1..rc6  .21-.26  Redis Cluster :6379, 3 masters + 3 replicas
#   rs1 .31 Redis master, rs2 .32 its replica; sn1..sn3 .41-.43 Sentinels :26379 (master `seatflow`)
#   ns1 .51, ns2 .52  RocketMQ 5.3.3 name servers :9876
#   bk1 .61 (broker-a), bk2 .62 (broker-b)  master brokers :10911 of cluster SeatFlowCluster
#   app1..app3 .71-.73  reserved for `seatflow serve` (started by the tests: `exec app1 CMD`)
#
# Usage:
#   scripts/cluster.sh up                      (re)create the topology, wait until every part is ready
#   scripts/cluster.sh down                    kill what it started, delete namespaces, veths, bridge
#   scripts/cluster.sh status                  each host: address, namespace, process
#   scripts/cluster.sh env                     the SEATFLOW_CLUSTER_* lines tests read
#   scripts/cluster.sh exec HOST CMD...        run CMD inside HOST's namespace (exec: same pid)
#   scripts/cluster.sh kill HOST               SIGKILL the service of HOST
#   scripts/cluster.sh start HOST              start HOST's service again on its data, wait until ready
#   scripts/cluster.sh partition HOST PEER     drop all traffic between HOST and PEER (iptables in HOST)
#   scripts/cluster.sh heal HOST               remove HOST's partitions
#   scripts/cluster.sh netem HOST DELAY        delay HOST's outgoing packets (tc netem; DELAY 0 removes)
#   scripts/cluster.sh mqadmin ARGS...         RocketMQ admin CLI against both name servers
#
# State (data, logs, pid files, env): ${SEATFLOW_CLUSTER_DIR:-<repo>/.cluster}
# Readiness timeout per step: ${SEATFLOW_CLUSTER_TIMEOUT:-180} seconds. Needs root (ip netns).
set -euo pipefail

LOG_TAG=cluster
# services.sh only defines its functions when sourced: installs, pid files, RocketMQ jars and mqadmin.
# shellcheck source=services.sh
. "$(dirname "${BASH_SOURCE[0]}")/services.sh"

CDIR=${SEATFLOW_CLUSTER_DIR:-$REPO/.cluster}
TIMEOUT=${SEATFLOW_CLUSTER_TIMEOUT:-180}
SCRIPT=$REPO/scripts/cluster.sh

NET=198.18.0
BRIDGE=sfbr0
BRIDGE_IP=$NET.1
declare -A IP=(
    [db]=$NET.10
    [rc1]=$NET.21 [rc2]=$NET.22 [rc3]=$NET.23 [rc4]=$NET.24 [rc5]=$NET.25 [rc6]=$NET.26
    [rs1]=$NET.31 [rs2]=$NET.32
    [sn1]=$NET.41 [sn2]=$NET.42 [sn3]=$NET.43
    [ns1]=$NET.51 [ns2]=$NET.52
    [bk1]=$NET.61 [bk2]=$NET.62
    [app1]=$NET.71 [app2]=$NET.72 [app3]=$NET.73
)
HOSTS=(db rc1 rc2 rc3 rc4 rc5 rc6 rs1 rs2 sn1 sn2 sn3 ns1 ns2 bk1 bk2 app1 app2 app3)
RC_HOSTS=(rc1 rc2 rc3 rc4 rc5 rc6)
SN_HOSTS=(sn1 sn2 sn3)
RMQ_CLUSTER=SeatFlowCluster
SENTINEL_MASTER=seatflow
declare -A BROKER_NAME=([bk1]=broker-a [bk2]=broker-b)

# Used by the services.sh functions (db_root, db_app, mqadmin).
HOST=${IP[db]}
MYSQL_PORT=3306
NAMESRV="${IP[ns1]}:9876;${IP[ns2]}:9876"
ADMIN_HOME=$CDIR/admin
DB_DIR=$CDIR/db
DB_CNF=$DB_DIR/my.cnf
DB_SOCK=$DB_DIR/mysql.sock
DB_PID=$DB_DIR/mariadb.pid
DB_LOG=$DB_DIR/mariadb.log
DB_OUT=$DB_DIR/mariadbd.out

netns() { echo "sf-$1"; }
veth() { echo "sfv-$1"; }
in_ns() { local h=$1; shift; ip netns exec "$(netns "$h")" "$@"; }

known_host() { [[ -n ${IP[$1]:-} ]] || die "unknown host '$1' (${HOSTS[*]})"; }

# pidfile and command-line pattern of each host's service (none for app hosts).
pidfile() { echo "$CDIR/$1/pid"; }
pattern() {
    case $1 in
        db) echo "$DB_CNF" ;;
        rc* | rs* | sn*) echo redis-server ;;
        ns* | bk*) echo "$CDIR/$1/$1.conf" ;;
        *) return 1 ;;
    esac
}

# tcp_open IP PORT: something accepts connections there.
tcp_open() { timeout 2 bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$1" "$2" 2>/dev/null; }

# ---------------------------------------------------------------------------------------------------
# network

net_up() {
    ip link add "$BRIDGE" type bridge
    ip addr add "$BRIDGE_IP/24" dev "$BRIDGE"
    ip link set "$BRIDGE" up
    local h ns
    for h in "${HOSTS[@]}"; do
        ns=$(netns "$h")
        ip netns add "$ns"
        ip link add "$(veth "$h")" type veth peer name eth0 netns "$ns"
        ip link set "$(veth "$h")" master "$BRIDGE" up
        ip -n "$ns" addr add "${IP[$h]}/24" dev eth0
        ip -n "$ns" link set eth0 up
        ip -n "$ns" link set lo up
    done
    log "network: bridge $BRIDGE $BRIDGE_IP/24, ${#HOSTS[@]} namespaces"
}

# Everything of ours that exists: namespaces, veths, bridge.
leftovers() {
    local h
    for h in "${HOSTS[@]}"; do
        [[ -e /run/netns/$(netns "$h") ]] && echo "netns $(netns "$h")"
        ip link show "$(veth "$h")" >/dev/null 2>&1 && echo "link $(veth "$h")"
    done
    ip link show "$BRIDGE" >/dev/null 2>&1 && echo "link $BRIDGE"
    for h in "${HOSTS[@]}"; do
        if pattern "$h" >/dev/null && pid_of "$(pidfile "$h")" "$(pattern "$h")" >/dev/null; then echo "process $h"; fi
    done
    return 0
}

# ---------------------------------------------------------------------------------------------------
# services: *_conf writes a host's config (fresh `up` only: `start` reuses it, since Sentinel rewrites
# its own and its Redis instances' files), launch starts the process in its namespace without waiting.

redis_conf() {
    local h=$1 d=$CDIR/$1 ip=${IP[$1]}
    mkdir -p "$d"
    cat >"$d/redis.conf" <<EOF
bind $ip
port 6379
protected-mode no
daemonize no
dir $d
logfile $d/redis.log
appendonly yes
appendfsync everysec
save ""
maxmemory-policy noeviction
EOF
    case $h in
        rc*) cat >>"$d/redis.conf" <<EOF
cluster-enabled yes
cluster-config-file nodes.conf
# Short timeouts: a killed master's replica takes over ~2-4 s later.
cluster-node-timeout 2000
cluster-announce-ip $ip
EOF
            ;;
        rs2) printf 'replicaof %s 6379\nreplica-announce-ip %s\n' "${IP[rs1]}" "$ip" >>"$d/redis.conf" ;;
        rs1) printf 'replica-announce-ip %s\n' "$ip" >>"$d/redis.conf" ;;
    esac
}

sentinel_conf() {
    local d=$CDIR/$1 ip=${IP[$1]}
    mkdir -p "$d"
    cat >"$d/redis.conf" <<EOF
bind $ip
port 26379
protected-mode no
daemonize no
dir $d
logfile $d/redis.log
sentinel announce-ip $ip
sentinel monitor $SENTINEL_MASTER ${IP[rs1]} 6379 2
sentinel down-after-milliseconds $SENTINEL_MASTER 2000
sentinel failover-timeout $SENTINEL_MASTER 10000
sentinel parallel-syncs $SENTINEL_MASTER 1
EOF
}

db_conf() {
    mkdir -p "$DB_DIR"
    write_db_cnf # services.sh, with HOST/MYSQL_PORT/DB_* above
    sed -i 's/^innodb_buffer_pool_size=.*/innodb_buffer_pool_size=128M/; s/^max_connections=.*/max_connections=500/' "$DB_CNF"
    "$(install_db_bin)" --defaults-file="$DB_CNF" --skip-test-db \
        --auth-root-authentication-method=socket >"$DB_DIR/install-db.log" 2>&1 ||
        fail "db: install-db failed" "$DB_DIR/install-db.log"
}

namesrv_conf() {
    mkdir -p "$CDIR/$1"
    printf 'listenPort=9876\nbindAddress=%s\n' "${IP[$1]}" >"$CDIR/$1/$1.conf"
}

# broker_conf HOST: scripts/rocketmq/broker.conf (same store sizes, delay levels, timer wheel) with
# this cluster's names and addresses; every substituted key is checked, since RocketMQ ignores typos.
broker_conf() {
    local h=$1 d=$CDIR/$1 ip=${IP[$1]} conf=$CDIR/$1/$1.conf
    mkdir -p "$d/store"
    sed -e "s#@STORE_DIR@#$d/store#g" \
        -e "s/^brokerClusterName=.*/brokerClusterName=$RMQ_CLUSTER/" \
        -e "s/^brokerName=.*/brokerName=${BROKER_NAME[$h]}/" \
        -e "s/^namesrvAddr=.*/namesrvAddr=$NAMESRV/" \
        -e "s/^brokerIP1=.*/brokerIP1=$ip/" -e "s/^brokerIP2=.*/brokerIP2=$ip/" \
        -e "s/^bindAddress=.*/bindAddress=$ip/" \
        -e "s/^autoCreateTopicEnable=.*/autoCreateTopicEnable=false/" \
        -e "s/^autoCreateSubscriptionGroup=.*/autoCreateSubscriptionGroup=true/" \
        "$RMQ_SRC/broker.conf" >"$conf"
    # A restarted name server learns the brokers at their next registration (default every 30 s).
    echo "registerNameServerPeriod=10000" >>"$conf"
    local want
    for want in "brokerClusterName=$RMQ_CLUSTER" "brokerName=${BROKER_NAME[$h]}" "namesrvAddr=$NAMESRV" \
        "brokerIP1=$ip" "bindAddress=$ip" autoCreateTopicEnable=false autoCreateSubscriptionGroup=true \
        timerWheelEnable=true; do
        grep -qxF "$want" "$conf" || die "$h: $conf lacks $want (scripts/rocketmq/broker.conf changed?)"
    done
}

launch() {
    local h=$1 d=$CDIR/$1
    local pid
    if pid=$(pid_of "$(pidfile "$h")" "$(pattern "$h")"); then
        log "$h: already running (pid $pid)"
        return 0
    fi
    case $h in
        db)
            rm -f "$DB_SOCK"
            start_bg "$(pidfile db)" "$DB_OUT" ip netns exec "$(netns db)" "$(mariadbd_bin)" --defaults-file="$DB_CNF"
            ;;
        rc* | rs*) start_bg "$(pidfile "$h")" "$d/redis.out" ip netns exec "$(netns "$h")" redis-server "$d/redis.conf" ;;
        sn*) start_bg "$(pidfile "$h")" "$d/redis.out" ip netns exec "$(netns "$h")" redis-server "$d/redis.conf" --sentinel ;;
        ns*)
            rmq_java "$d" rmq.namesrv.logback.xml -Xms128m -Xmx256m -XX:MaxDirectMemorySize=128m
            ROCKETMQ_HOME=$d start_bg "$(pidfile "$h")" "$d/$h.out" ip netns exec "$(netns "$h")" "${RMQ_CMD[@]}" \
                org.apache.rocketmq.namesrv.NamesrvStartup -c "$d/$h.conf"
            ;;
        bk*)
            rmq_java "$d" rmq.broker.logback.xml -Xms256m -Xmx384m -XX:MaxDirectMemorySize=256m
            ROCKETMQ_HOME=$d start_bg "$(pidfile "$h")" "$d/$h.out" ip netns exec "$(netns "$h")" "${RMQ_CMD[@]}" \
                org.apache.rocketmq.broker.BrokerStartup -c "$d/$h.conf"
            ;;
        *) die "$h runs no service of this script" ;;
    esac
}

logs_of() {
    local d=$CDIR/$1
    case $1 in
        db) echo "$DB_LOG $DB_OUT" ;;
        rc* | rs* | sn*) echo "$d/redis.log $d/redis.out" ;;
        ns*) echo "$d/$1.out $d/logs/rocketmqlogs/namesrv.log" ;;
        bk*) echo "$d/$1.out $d/logs/rocketmqlogs/broker.log" ;;
    esac
}

# wait_host HOST WHAT CHECK...: wait_for of services.sh for HOST's process and logs.
wait_host() {
    local h=$1 what=$2; shift 2
    wait_for "$h ($what)" "$(pidfile "$h")" "$(logs_of "$h")" "$@"
}

rcli() { local h=$1; shift; redis-cli -h "${IP[$h]}" -p "$(redis_port "$h")" "$@"; }
redis_port() { if [[ $1 == sn* ]]; then echo 26379; else echo 6379; fi; }
redis_ready() { [[ $(rcli "$1" ping 2>/dev/null) == PONG ]]; }
db_ready() { db_root -N -e 'SELECT 1' | grep -qx 1; }
ns_ready() { grep -q 'The Name Server boot success' "$CDIR/$1/$1.out" && tcp_open "${IP[$1]}" 9876; }
bk_booted() { grep -q 'boot success' "$CDIR/$1/$1.out" && tcp_open "${IP[$1]}" 10911; }
# Registered with both name servers.
bk_registered() {
    local ns
    for ns in ns1 ns2; do
        mqadmin clusterList -n "${IP[$ns]}:9876" | grep -q "${IP[$1]}:10911" || return 1
    done
}
rc_cluster_ok() {
    local info
    info=$(rcli "$1" cluster info 2>/dev/null) || return 1
    grep -q 'cluster_state:ok' <<<"$info" && grep -q 'cluster_size:3' <<<"$info"
}
# Every sentinel names the master and sees the other two (needed to agree on a failover).
sentinels_ready() {
    local h
    for h in "${SN_HOSTS[@]}"; do
        rcli "$h" sentinel get-master-addr-by-name "$SENTINEL_MASTER" | grep -q '^[0-9]' || return 1
        [[ $(rcli "$h" sentinel master "$SENTINEL_MASTER" | grep -A1 -x num-other-sentinels | tail -1) == 2 ]] || return 1
    done
}
rs2_synced() { rcli rs2 info replication | grep -q 'master_link_status:up'; }
rocketmq_ready() {
    local ns out
    for ns in ns1 ns2; do
        out=$(mqadmin clusterList -n "${IP[$ns]}:9876")
        grep -q "${IP[bk1]}:10911" <<<"$out" && grep -q "${IP[bk2]}:10911" <<<"$out" || return 1
        [[ $(grep -c "^$RMQ_CLUSTER" <<<"$out") == 2 ]] || return 1
    done
}

db_provision() {
    db_root <<'SQL' || fail "db: provisioning failed" "$DB_LOG"
CREATE DATABASE IF NOT EXISTS seatflow CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
CREATE USER IF NOT EXISTS 'seatflow'@'%' IDENTIFIED BY 'seatflow';
GRANT ALL PRIVILEGES ON *.* TO 'seatflow'@'%';
SQL
    db_app -N -e 'SELECT 1' seatflow | grep -qx 1 || fail "db: seatflow@${IP[db]}:3306 cannot log in" "$DB_LOG"
}

# ready HOST: wait until HOST's service answers (after `start`: with the rest of its group).
ready() {
    local h=$1
    case $h in
        db) wait_host db "login" db_ready; db_provision ;;
        rc*) wait_host "$h" ping redis_ready "$h"; wait_host "$h" "cluster_state:ok" rc_cluster_ok "$h" ;;
        rs*) wait_host "$h" ping redis_ready "$h" ;;
        sn*) wait_host "$h" ping redis_ready "$h"; wait_host "$h" "sentinels agree" sentinels_ready ;;
        ns*) wait_host "$h" "boot" ns_ready "$h" ;;
        bk*) wait_host "$h" "boot" bk_booted "$h"; wait_host "$h" "registered with ns1 and ns2" bk_registered "$h" ;;
    esac
}

# ---------------------------------------------------------------------------------------------------
# commands

cmd_up() {
    local t0 h
    t0=$(now)
    if [[ -n $(leftovers) ]]; then
        log "stale topology found: down first"
        cmd_down
    fi
    local pkgs=()
    read -r -a pkgs <<<"$(missing_packages mariadb redis)"
    have iptables || pkgs+=(iptables)
    apt_install "${pkgs[@]}"
    rmq_fetch
    rm -rf "$CDIR"
    mkdir -p "$CDIR"
    net_up
    db_conf
    for h in "${RC_HOSTS[@]}" rs1 rs2; do redis_conf "$h"; done
    for h in "${SN_HOSTS[@]}"; do sentinel_conf "$h"; done
    namesrv_conf ns1; namesrv_conf ns2
    broker_conf bk1; broker_conf bk2
    # Everything at once; brokers once a name server answers (they register right at boot).
    for h in ns1 ns2 db "${RC_HOSTS[@]}" rs1 rs2 "${SN_HOSTS[@]}"; do launch "$h"; done
    ready ns1; ready ns2
    launch bk1; launch bk2
    for h in "${RC_HOSTS[@]}"; do wait_host "$h" ping redis_ready "$h"; done
    local nodes=() out
    for h in "${RC_HOSTS[@]}"; do nodes+=("${IP[$h]}:6379"); done
    out=$(redis-cli --cluster create "${nodes[@]}" --cluster-replicas 1 --cluster-yes 2>&1) ||
        { printf '%s\n' "$out" >&2; fail "redis cluster: create failed" "$CDIR/rc1/redis.log"; }
    for h in "${RC_HOSTS[@]}"; do wait_host "$h" "cluster_state:ok" rc_cluster_ok "$h"; done
    log "redis cluster: ok ($(rcli rc1 cluster nodes | grep -c master) masters) in $(since "$t0")"
    wait_host rs1 ping redis_ready rs1
    wait_host rs2 "replica in sync" rs2_synced
    for h in "${SN_HOSTS[@]}"; do wait_host "$h" ping redis_ready "$h"; done
    wait_host sn1 "sentinels agree" sentinels_ready
    log "sentinel: master $(rcli sn1 sentinel get-master-addr-by-name "$SENTINEL_MASTER" | paste -sd:) in $(since "$t0")"
    ready db
    log "db: ready in $(since "$t0")"
    for h in bk1 bk2; do wait_host "$h" "boot" bk_booted "$h"; done
    wait_host bk1 "both brokers in $RMQ_CLUSTER on both name servers" rocketmq_ready
    log "rocketmq: 2 brokers in $RMQ_CLUSTER in $(since "$t0")"
    # Quoted: the MySQL URL's parentheses would break `set -a; . .cluster/env`.
    env_lines | sed "s/=\(.*\)/='\1'/" >"$CDIR/env"
    log "all ready in $(since "$t0"); env in $CDIR/env"
    env_lines
}

cmd_down() {
    local t0 h pid pids
    t0=$(now)
    for h in "${HOSTS[@]}"; do
        if pattern "$h" >/dev/null && pid=$(pid_of "$(pidfile "$h")" "$(pattern "$h")"); then
            kill -KILL "$pid" 2>/dev/null || true
        fi
        rm -f "$(pidfile "$h")"
    done
    # Whatever else runs in our namespaces (seatflow instances started with `exec`) goes with them.
    for h in "${HOSTS[@]}"; do
        [[ -e /run/netns/$(netns "$h") ]] || continue
        pids=$(ip netns pids "$(netns "$h")" 2>/dev/null | tr '\n' ' ')
        if [[ -n ${pids// /} ]]; then
            log "$h: killing $pids"
            # shellcheck disable=SC2086 # a list of pids
            kill -KILL $pids 2>/dev/null || true
        fi
    done
    for h in "${HOSTS[@]}"; do
        for pid in $(ip netns pids "$(netns "$h")" 2>/dev/null); do while alive "$pid"; do sleep 0.05; done; done
        ip link del "$(veth "$h")" 2>/dev/null || true
        ip netns del "$(netns "$h")" 2>/dev/null || true
    done
    ip link del "$BRIDGE" 2>/dev/null || true
    local left
    left=$(leftovers)
    [[ -z $left ]] || die "left over after down: $left"
    log "down in $(since "$t0")"
}

cmd_kill() {
    local h=$1 pid
    pattern "$h" >/dev/null || die "$h runs no service of this script"
    pid=$(pid_of "$(pidfile "$h")" "$(pattern "$h")") || die "$h: not running"
    kill -KILL "$pid"
    while alive "$pid"; do sleep 0.05; done
    log "$h: killed (pid $pid)"
}

cmd_start() {
    local h=$1 t0
    t0=$(now)
    pattern "$h" >/dev/null || die "$h runs no service of this script"
    [[ -e /run/netns/$(netns "$h") ]] || die "no topology (scripts/cluster.sh up)"
    launch "$h"
    ready "$h"
    log "$h: ready in $(since "$t0")"
}

cmd_partition() {
    local h=$1 peer=$2
    known_host "$peer"
    in_ns "$h" iptables -w -I INPUT -s "${IP[$peer]}" -j DROP
    in_ns "$h" iptables -w -I OUTPUT -d "${IP[$peer]}" -j DROP
    log "$h: partitioned from $peer"
}

cmd_heal() {
    in_ns "$1" iptables -w -F INPUT
    in_ns "$1" iptables -w -F OUTPUT
    log "$1: healed"
}

cmd_netem() {
    local h=$1 delay=$2
    if [[ $delay == 0 || $delay == 0ms ]]; then
        in_ns "$h" tc qdisc del dev eth0 root 2>/dev/null || true
        log "$h: no delay"
        return 0
    fi
    local out
    out=$(in_ns "$h" tc qdisc replace dev eth0 root netem delay "$delay" 2>&1) ||
        die "$h: tc netem failed: $out$(zcat /proc/config.gz 2>/dev/null | grep -q '^# CONFIG_NET_SCH_NETEM is not set' && echo ' (this kernel is built without sch_netem)')"
    log "$h: outgoing packets delayed by $delay"
}

env_lines() {
    local rc="" h hosts=""
    for h in "${RC_HOSTS[@]}"; do rc+="${rc:+,}${IP[$h]}:6379"; done
    for h in "${HOSTS[@]}"; do hosts+="${hosts:+,}$h=${IP[$h]}"; done
    echo "SEATFLOW_CLUSTER_MYSQL=mysql://seatflow:seatflow@tcp(${IP[db]}:3306)/seatflow"
    echo "SEATFLOW_CLUSTER_REDIS_CLUSTER=redis-cluster://$rc"
    echo "SEATFLOW_CLUSTER_REDIS_SENTINEL=redis-sentinel://${IP[sn1]}:26379,${IP[sn2]}:26379,${IP[sn3]}:26379/$SENTINEL_MASTER"
    echo "SEATFLOW_CLUSTER_ROCKETMQ=rocketmq://${IP[ns1]}:9876,${IP[ns2]}:9876"
    echo "SEATFLOW_CLUSTER_ROCKETMQ_CLUSTER=$RMQ_CLUSTER"
    echo "SEATFLOW_CLUSTER_APP_ADDRS=${IP[app1]},${IP[app2]},${IP[app3]}"
    echo "SEATFLOW_CLUSTER_HOSTS=$hosts"
    echo "SEATFLOW_CLUSTER_SCRIPT=$SCRIPT"
}

cmd_status() {
    local h state pid
    for h in "${HOSTS[@]}"; do
        if [[ -e /run/netns/$(netns "$h") ]]; then state=netns; else state=absent; fi
        if pattern "$h" >/dev/null; then
            if pid=$(pid_of "$(pidfile "$h")" "$(pattern "$h")"); then state+="  running pid $pid"; else state+="  stopped"; fi
        fi
        printf '%-5s %-12s %s\n' "$h" "${IP[$h]}" "$state"
    done
}

cluster_main() {
    local cmd=${1:-}
    (($# > 0)) && shift
    case $cmd in
        env) env_lines; return ;;
        status) cmd_status; return ;;
        exec)
            (($# >= 2)) || die "usage: $0 exec HOST CMD..."
            known_host "$1"
            local h=$1; shift
            exec ip netns exec "$(netns "$h")" "$@"
            ;;
        mqadmin) rmq_fetch; mqadmin "$@"; return ;;
        up | down | kill | start | partition | heal | netem) ;;
        *) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; [[ $cmd == help || $cmd == -h ]]; return ;;
    esac
    [[ $EUID -eq 0 ]] || die "needs root (network namespaces)"
    case $cmd in
        kill | start | heal) (($# == 1)) || die "usage: $0 $cmd HOST"; known_host "$1" ;;
        partition) (($# == 2)) || die "usage: $0 partition HOST PEER"; known_host "$1" ;;
        netem) (($# == 2)) || die "usage: $0 netem HOST DELAY (e.g. 1ms; 0 removes)"; known_host "$1" ;;
    esac
    mkdir -p "$CDIR" "$CACHE_DIR"
    # One mutating run at a time: the namespace names and addresses are machine-wide.
    exec 9>"${SEATFLOW_CLUSTER_LOCK:-/tmp/seatflow-cluster.lock}"
    flock -w 900 9 || die "another scripts/cluster.sh run holds the lock"
    "cmd_$cmd" "$@"
}

cluster_main "$@"
