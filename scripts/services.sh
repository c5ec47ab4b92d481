#!/usr/bin/env bash
# SeatFlow backing services for development and CI, on 127.0.0.1 only:
#   MariaDB (3306), Redis (6379), Apache RocketMQ 5.3.3 name server (9876) + broker (10911).
#
# Usage:
#   scripts/services.sh up     [mariadb|redis|rocketmq ...]   install what is missing, start, wait until ready
#   scripts/services.sh down   [mariadb|redis|rocketmq ...]   stop what this script started (pid files)
#   scripts/services.sh status                                 state of each service
#   scripts/services.sh start|stop|restart SERVICE             SERVICE: mariadb redis rocketmq
#                                                              rocketmq-namesrv rocketmq-broker
#   scripts/services.sh topic NAME [QUEUES]                    create a RocketMQ topic, check its route
#   scripts/services.sh env                                    print the SEATFLOW_TEST_* lines
#   scripts/services.sh mqadmin ARGS...                        RocketMQ admin CLI (e.g. clusterList -n 127.0.0.1:9876)
#
# State (data, logs, pid files): ${SEATFLOW_SERVICES_DIR:-<repo>/.services}
# Caches (RocketMQ jars, compiled shim): ${SEATFLOW_CACHE_DIR:-$HOME/.cache/seatflow}
# Readiness timeout per service: ${SEATFLOW_SERVICES_TIMEOUT:-180} seconds.
# Ports: ${SEATFLOW_MYSQL_PORT:-3306}, ${SEATFLOW_REDIS_PORT:-6379} (RocketMQ's are fixed).
#
# RocketMQ: `up` on a stopped RocketMQ starts from a fresh work dir (empty store: no topics, offsets or
# messages left over from an earlier run; SEATFLOW_RMQ_KEEP_STORE=1 keeps it). `stop`/`start`/`restart
# rocketmq-broker` always keep the store, so pending delayed/timer messages survive a broker restart.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SVC_DIR=${SEATFLOW_SERVICES_DIR:-$REPO/.services}
CACHE_DIR=${SEATFLOW_CACHE_DIR:-$HOME/.cache/seatflow}
TIMEOUT=${SEATFLOW_SERVICES_TIMEOUT:-180}

HOST=127.0.0.1
# Ports of MariaDB and Redis may be moved, for a private instance beside the shared one (tests that
# stop and start their own: SEATFLOW_SERVICES_DIR=<tmp> SEATFLOW_MYSQL_PORT=<free> ... up mariadb).
MYSQL_PORT=${SEATFLOW_MYSQL_PORT:-3306}
REDIS_PORT=${SEATFLOW_REDIS_PORT:-6379}
NAMESRV_PORT=9876
BROKER_PORT=10911 # the broker also listens on BROKER_PORT-2 (fast remoting) and BROKER_PORT+1 (HA)
NAMESRV=$HOST:$NAMESRV_PORT
RMQ_VERSION=5.3.3
RMQ_SRC=$REPO/scripts/rocketmq
RMQ_CACHE=$CACHE_DIR/rocketmq-$RMQ_VERSION
RMQ_LIB=$RMQ_CACHE/lib
RMQ_SHIM=$RMQ_CACHE/shim
RMQ_DIR=$SVC_DIR/rocketmq
# Topic the application needs; created by `up rocketmq` as part of the readiness check.
APP_TOPIC=SEATFLOW_TIMEOUT
# Readiness send goes to its own topic so that no consumer of the app topic ever sees it.
PROBE_TOPIC=SEATFLOW_PROBE

SUDO=""
if [[ $EUID -ne 0 ]]; then SUDO=sudo; fi

# LOG_TAG: scripts/cluster.sh sources this file for its functions and logs as "cluster".
log() { printf '[%s %(%H:%M:%S)T] %s\n' "${LOG_TAG:-services}" -1 "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
now() { date +%s.%N; }
since() { awk -v s="$1" -v e="$(now)" 'BEGIN { printf "%.1fs", e - s }'; }
have() { command -v "$1" >/dev/null 2>&1; }

# fail MESSAGE LOGFILE... : error with the tail of each log that exists.
fail() {
    local msg=$1; shift
    log "ERROR: $msg"
    local f
    for f in "$@"; do
        if [[ -s $f ]]; then
            printf -- '---- tail -n 40 %s\n' "$f" >&2
            tail -n 40 "$f" >&2
        fi
    done
    exit 1
}

# ---------------------------------------------------------------------------------------------------
# processes and ports

# pid_of PIDFILE PATTERN: print the pid if it is alive and its command line contains PATTERN
# (a stale pid file whose pid was reused by another program does not count).
pid_of() {
    local file=$1 pattern=$2 pid
    [[ -s $file ]] || return 1
    pid=$(tr -dc '0-9' <"$file")
    [[ -n $pid ]] && alive "$pid" || return 1
    { tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -qF -- "$pattern" || return 1
    echo "$pid"
}

# alive PID: running and not a zombie (an exited server may stay <defunct> until init reaps it).
alive() {
    local state
    state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
    [[ -n $state && $state != Z ]]
}

listening() { [[ -n $(ss -Hltn "sport = :$1" 2>/dev/null) ]]; }

# require_free_port PORT NAME: refuse to start if something we did not start holds the port.
require_free_port() {
    if listening "$1"; then
        ss -Hltnp "sport = :$1" >&2 || true
        die "$2: port $1 is already in use by another process (not started by this script)"
    fi
}

# start_bg PIDFILE OUTFILE CMD...: run CMD detached (own session, no stdin), record its pid.
# setsid and nohup exec in place here, so $! is the server's own pid. 9>&-: the server must not
# inherit the lock held on fd 9, or every later invocation of this script would block on it.
start_bg() {
    local pidfile=$1 out=$2; shift 2
    setsid nohup "$@" >"$out" 2>&1 </dev/null 9>&- &
    echo $! >"$pidfile"
}

# stop_pid NAME PIDFILE PATTERN: SIGTERM, wait (servers flush on shutdown), then SIGKILL.
stop_pid() {
    local name=$1 file=$2 pattern=$3 pid i
    if ! pid=$(pid_of "$file" "$pattern"); then
        rm -f "$file"
        log "$name: not running"
        return 0
    fi
    local t0; t0=$(now)
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 600; i++)); do # 60 s
        alive "$pid" || break
        sleep 0.1
    done
    if alive "$pid"; then
        log "$name: still running after 60s, sending SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
        while alive "$pid"; do sleep 0.1; done
    fi
    rm -f "$file"
    log "$name: stopped (pid $pid) in $(since "$t0")"
}

# wait_for NAME PIDFILE 'LOG...' CHECK...: poll CHECK until it succeeds; fail with the logs
# if the process dies or TIMEOUT passes. Only whether the pid started just now is alive is asked:
# its command line is no proof while it starts (redis-server rewrites it to set its title, and a
# read in between once found it without the pattern, failing a start that went on to be ready).
wait_for() {
    local name=$1 pidfile=$2 logs=$3; shift 3
    local deadline=$((SECONDS + TIMEOUT))
    # shellcheck disable=SC2086 # logs is a space-separated list of paths without spaces
    until "$@" >/dev/null 2>&1; do
        if [[ -n $pidfile ]] && ! alive "$(tr -dc '0-9' <"$pidfile" 2>/dev/null)"; then
            fail "$name exited during startup" $logs
        fi
        if ((SECONDS >= deadline)); then
            fail "$name not ready after ${TIMEOUT}s" $logs
        fi
        sleep 0.3
    done
}

# ---------------------------------------------------------------------------------------------------
# packages (Debian)

# apt_install PKG...: one install for everything missing; `apt-get update` only when a package has no
# install candidate in the current lists, or once after a failed install (stale lists).
apt_install() {
    (($# > 0)) || return 0
    local t0 updated=0 pkg
    t0=$(now)
    export DEBIAN_FRONTEND=noninteractive
    for pkg in "$@"; do
        if ! apt-cache policy "$pkg" 2>/dev/null | grep -q 'Candidate: [0-9]'; then
            log "apt-get update (no candidate for $pkg)"
            $SUDO apt-get update -qq
            updated=1
            break
        fi
    done
    # Package scripts must not start their own servers (they would take ports 3306/6379 with the
    # system config): policy-rc.d exit 101 tells invoke-rc.d not to. Only added if absent.
    local policy=/usr/sbin/policy-rc.d added_policy=0
    if [[ ! -e $policy ]]; then
        printf '#!/bin/sh\n# added by seatflow scripts/services.sh during apt-get install\nexit 101\n' |
            $SUDO tee "$policy" >/dev/null
        $SUDO chmod 755 "$policy"
        added_policy=1
    fi
    local rc=0
    log "apt-get install $*"
    $SUDO apt-get install -y -qq --no-install-recommends "$@" >"$CACHE_DIR/apt-install.log" 2>&1 || rc=$?
    if ((rc != 0 && updated == 0)); then
        log "apt-get install failed; apt-get update and retry once"
        $SUDO apt-get update -qq
        rc=0
        $SUDO apt-get install -y -qq --no-install-recommends "$@" >"$CACHE_DIR/apt-install.log" 2>&1 || rc=$?
    fi
    if ((added_policy)); then $SUDO rm -f "$policy"; fi
    ((rc == 0)) || fail "apt-get install $* failed" "$CACHE_DIR/apt-install.log"
    log "installed $* in $(since "$t0")"
}

mariadbd_bin() {
    local b
    for b in mariadbd mysqld /usr/sbin/mariadbd /usr/sbin/mysqld; do
        if have "$b"; then command -v "$b"; return 0; fi
    done
    return 1
}
mysql_client() { if have mariadb; then echo mariadb; else echo mysql; fi; }
install_db_bin() { if have mariadb-install-db; then echo mariadb-install-db; else echo mysql_install_db; fi; }

# missing_packages SERVICE...: Debian packages to install for these services.
missing_packages() {
    local s pkgs=()
    for s in "$@"; do
        case $s in
            mariadb) mariadbd_bin >/dev/null || pkgs+=(mariadb-server) ;;
            redis) { have redis-server && have redis-cli; } || pkgs+=(redis-server) ;;
        esac
    done
    echo "${pkgs[@]}"
}

# ---------------------------------------------------------------------------------------------------
# MariaDB: mariadbd run directly (no systemd here) on its own datadir, config file and socket.

DB_DIR=$SVC_DIR/mariadb
DB_CNF=$DB_DIR/my.cnf
DB_SOCK=$DB_DIR/mysql.sock
DB_PID=$DB_DIR/mariadb.pid
DB_LOG=$DB_DIR/mariadb.log
DB_OUT=$DB_DIR/mariadbd.out

db_root() { "$(mysql_client)" --no-defaults --protocol=socket --socket="$DB_SOCK" -uroot "$@"; }
db_app() { MYSQL_PWD=seatflow "$(mysql_client)" --no-defaults --protocol=tcp -h"$HOST" -P"$MYSQL_PORT" -useatflow "$@"; }
db_ping() { db_root -N -e 'SELECT 1' | grep -qx 1; }

write_db_cnf() {
    # Only this file is read (--defaults-file): /etc/mysql is ignored. Sized for a 2-core CI box;
    # durability traded for speed (throwaway instance).
    cat >"$DB_CNF" <<EOF
[mysqld]
user=$(id -un)
datadir=$DB_DIR/data
socket=$DB_SOCK
pid-file=$DB_PID
log-error=$DB_LOG
bind-address=$HOST
port=$MYSQL_PORT
skip-name-resolve
skip-log-bin
character-set-server=utf8mb4
collation-server=utf8mb4_unicode_ci
max_connections=300
thread_cache_size=32
performance_schema=OFF
innodb_buffer_pool_size=256M
innodb_log_file_size=64M
innodb_log_buffer_size=16M
innodb_flush_log_at_trx_commit=2
innodb_doublewrite=0
innodb_read_io_threads=2
innodb_write_io_threads=2
innodb_lock_wait_timeout=20
EOF
}

mariadb_up() {
    local pid t0
    t0=$(now)
    if pid=$(pid_of "$DB_PID" "$DB_CNF"); then
        log "mariadb: already running (pid $pid)"
    else
        require_free_port "$MYSQL_PORT" mariadb
        mkdir -p "$DB_DIR"
        write_db_cnf
        if [[ ! -d $DB_DIR/data/mysql ]]; then
            rm -rf "$DB_DIR/data"
            # Root keeps unix_socket authentication: `mariadb -uroot --socket=...` as the same OS user.
            "$(install_db_bin)" --defaults-file="$DB_CNF" --skip-test-db \
                --auth-root-authentication-method=socket >"$DB_DIR/install-db.log" 2>&1 ||
                fail "mariadb: install-db failed" "$DB_DIR/install-db.log"
            log "mariadb: datadir initialised in $(since "$t0")"
        fi
        rm -f "$DB_SOCK"
        start_bg "$DB_PID" "$DB_OUT" "$(mariadbd_bin)" --defaults-file="$DB_CNF"
    fi
    wait_for mariadb "$DB_PID" "$DB_LOG $DB_OUT" db_ping
    # Idempotent provisioning. GRANT ALL ON *.*: tests create and drop their own seatflow_test*
    # databases; acceptable for a loopback-only throwaway instance.
    db_root <<'SQL' || fail "mariadb: provisioning failed" "$DB_LOG"
CREATE DATABASE IF NOT EXISTS seatflow CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
CREATE USER IF NOT EXISTS 'seatflow'@'%' IDENTIFIED BY 'seatflow';
CREATE USER IF NOT EXISTS 'seatflow'@'localhost' IDENTIFIED BY 'seatflow';
GRANT ALL PRIVILEGES ON *.* TO 'seatflow'@'%';
GRANT ALL PRIVILEGES ON *.* TO 'seatflow'@'localhost';
SQL
    db_app -N -e 'SELECT 1' seatflow | grep -qx 1 || fail "mariadb: seatflow@$HOST:$MYSQL_PORT cannot log in" "$DB_LOG"
    log "mariadb: ready on $HOST:$MYSQL_PORT (pid $(pid_of "$DB_PID" "$DB_CNF")) in $(since "$t0")"
}

mariadb_down() { stop_pid mariadb "$DB_PID" "$DB_CNF"; }

# ---------------------------------------------------------------------------------------------------
# Redis: no persistence, loopback only.

REDIS_DIR=$SVC_DIR/redis
REDIS_PID=$REDIS_DIR/redis.pid
REDIS_LOG=$REDIS_DIR/redis.log

redis_ping() { [[ $(redis-cli -h "$HOST" -p "$REDIS_PORT" ping 2>/dev/null) == PONG ]]; }

redis_up() {
    local pid t0
    t0=$(now)
    if pid=$(pid_of "$REDIS_PID" redis-server); then
        log "redis: already running (pid $pid)"
    else
        require_free_port "$REDIS_PORT" redis
        mkdir -p "$REDIS_DIR"
        # Detached by start_bg rather than --daemonize yes: the pid is known at once, so a server that
        # dies during startup fails the wait immediately instead of at the timeout.
        start_bg "$REDIS_PID" "$REDIS_DIR/redis.out" redis-server --bind "$HOST" --port "$REDIS_PORT" \
            --protected-mode yes --save '' --appendonly no --daemonize no \
            --pidfile "$REDIS_PID" --logfile "$REDIS_LOG" --dir "$REDIS_DIR"
    fi
    wait_for redis "$REDIS_PID" "$REDIS_LOG $REDIS_DIR/redis.out" redis_ping
    log "redis: ready on $HOST:$REDIS_PORT (pid $(pid_of "$REDIS_PID" redis-server)) in $(since "$t0")"
}

redis_down() { stop_pid redis "$REDIS_PID" redis-server; }

# ---------------------------------------------------------------------------------------------------
# RocketMQ 5.3.3 from Maven Central jars (no binary distribution, no proxy: clients speak the remoting
# protocol to the name server and broker directly).

NS_DIR=$RMQ_DIR/namesrv
NS_PID=$RMQ_DIR/namesrv.pid
NS_OUT=$NS_DIR/namesrv.out
NS_CONF=$NS_DIR/namesrv.conf
BK_DIR=$RMQ_DIR/broker
BK_PID=$RMQ_DIR/broker.pid
BK_OUT=$BK_DIR/broker.out
BK_CONF=$BK_DIR/broker.conf
ADMIN_HOME=$RMQ_DIR/admin

# Jars: `mvn dependency:copy-dependencies` of scripts/rocketmq/pom.xml into the cache, keyed by the
# pom's hash (re-runs skip Maven entirely).
rmq_fetch() {
    have java || die "rocketmq: java (17) not found"
    local want have_hash="" t0
    want=$(sha256sum "$RMQ_SRC/pom.xml" | cut -c1-16)
    [[ -f $RMQ_LIB/.complete ]] && have_hash=$(<"$RMQ_LIB/.complete")
    if [[ $have_hash != "$want" ]]; then
        have mvn || die "rocketmq: mvn not found"
        t0=$(now)
        mkdir -p "$RMQ_CACHE"
        rm -rf "$RMQ_LIB" "$RMQ_LIB.tmp"
        log "rocketmq: fetching $RMQ_VERSION jars with Maven"
        mvn -B -q -f "$RMQ_SRC/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
            -DoutputDirectory="$RMQ_LIB.tmp" >"$RMQ_CACHE/mvn.log" 2>&1 ||
            fail "rocketmq: Maven download failed" "$RMQ_CACHE/mvn.log"
        echo "$want" >"$RMQ_LIB.tmp/.complete"
        mv "$RMQ_LIB.tmp" "$RMQ_LIB"
        log "rocketmq: $(find "$RMQ_LIB" -name '*.jar' | wc -l) jars fetched in $(since "$t0")"
    fi
    # Small Java helpers (scripts/rocketmq/*.java), compiled once per source/jar change:
    # LoopbackHAService keeps the HA port on loopback, AdminMain makes mqadmin calls exit promptly.
    want=$(cat "$RMQ_SRC"/*.java "$RMQ_LIB/.complete" | sha256sum | cut -c1-16)
    have_hash=""
    [[ -f $RMQ_SHIM/.complete ]] && have_hash=$(<"$RMQ_SHIM/.complete")
    if [[ $have_hash != "$want" ]]; then
        have javac || die "rocketmq: javac (JDK 17) not found"
        t0=$(now)
        rm -rf "$RMQ_SHIM"
        mkdir -p "$RMQ_SHIM/META-INF/service"
        javac -nowarn -d "$RMQ_SHIM" -cp "$RMQ_LIB/*" "$RMQ_SRC"/*.java \
            >"$RMQ_CACHE/javac.log" 2>&1 || fail "rocketmq: compiling scripts/rocketmq/*.java failed" "$RMQ_CACHE/javac.log"
        # Read by DefaultMessageStore through ServiceProvider.loadClass(HAService.class).
        echo seatflow.dev.rocketmq.LoopbackHAService >"$RMQ_SHIM/META-INF/service/org.apache.rocketmq.store.ha.HAService"
        echo "$want" >"$RMQ_SHIM/.complete"
        log "rocketmq: helpers compiled in $(since "$t0")"
    fi
}

# rmq_java HOME LOGBACK [HEAP_FLAG...]: JVM command line for a server. user.home decides where the logback configs
# shipped in the jars write (HOME/logs/rocketmqlogs/); naming the logback file explicitly keeps the
# name server from picking up the broker's. rocketmq.home.dir must be set (exit -2 otherwise).
rmq_java() {
    local home=$1 logback=$2
    shift 2
    local heap=("$@")
    ((${#heap[@]} > 0)) || heap=(-Xms256m -Xmx512m -XX:MaxDirectMemorySize=512m)
    RMQ_CMD=(java -server "${heap[@]}" -XX:+UseG1GC
        -XX:-OmitStackTraceInFastThrow -Djava.net.preferIPv4Stack=true
        -Duser.home="$home" -Drocketmq.home.dir="$home" -Drmq.logback.configurationFile="$logback"
        -cp "$RMQ_SHIM:$RMQ_LIB/*")
}

# mqadmin ARGS...: org.apache.rocketmq.tools.command.MQAdminStartup from rocketmq-tools, through
# AdminMain. Its exit status is 0 even when a sub-command fails: callers check the output.
# Commands that worked (5.3.3):
#   mqadmin clusterList -n 127.0.0.1:9876
#   mqadmin updateTopic -n 127.0.0.1:9876 -c DefaultCluster -t SEATFLOW_TIMEOUT -r 4 -w 4
#   mqadmin topicRoute  -n 127.0.0.1:9876 -t SEATFLOW_TIMEOUT
#   mqadmin sendMessage -n 127.0.0.1:9876 -t SEATFLOW_PROBE -p ping
mqadmin() {
    mkdir -p "$ADMIN_HOME"
    ROCKETMQ_HOME=$ADMIN_HOME java -Xms64m -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
        -Djava.net.preferIPv4Stack=true -Duser.home="$ADMIN_HOME" -Drocketmq.home.dir="$ADMIN_HOME" \
        -Drocketmq.namesrv.addr="$NAMESRV" -Drmq.logback.configurationFile=rmq.tools.logback.xml -cp "$RMQ_SHIM:$RMQ_LIB/*" \
        seatflow.dev.rocketmq.AdminMain "$@" 2>&1
}

ns_ready() { grep -q 'The Name Server boot success' "$NS_OUT" && listening "$NAMESRV_PORT"; }
bk_booted() { grep -q 'boot success' "$BK_OUT" && listening "$BROKER_PORT"; }
bk_registered() { mqadmin clusterList -n "$NAMESRV" | grep -q "$HOST:$BROKER_PORT"; }

namesrv_start() {
    local pid t0
    t0=$(now)
    if pid=$(pid_of "$NS_PID" "$NS_CONF"); then
        log "rocketmq-namesrv: already running (pid $pid)"
        return 0
    fi
    require_free_port "$NAMESRV_PORT" rocketmq-namesrv
    mkdir -p "$NS_DIR"
    cp "$RMQ_SRC/namesrv.conf" "$NS_CONF"
    rmq_java "$NS_DIR" rmq.namesrv.logback.xml
    ROCKETMQ_HOME=$NS_DIR start_bg "$NS_PID" "$NS_OUT" "${RMQ_CMD[@]}" \
        org.apache.rocketmq.namesrv.NamesrvStartup -c "$NS_CONF"
    wait_for rocketmq-namesrv "$NS_PID" "$NS_OUT $NS_DIR/logs/rocketmqlogs/namesrv.log" ns_ready
    log "rocketmq-namesrv: ready on $NAMESRV (pid $(pid_of "$NS_PID" "$NS_CONF")) in $(since "$t0")"
}

# broker_start [fresh]: "fresh" wipes the store first; otherwise the store (commit log, timer wheel,
# schedule offsets, topics) is kept.
broker_start() {
    local mode=${1:-keep} pid t0
    t0=$(now)
    if pid=$(pid_of "$BK_PID" "$BK_CONF"); then
        log "rocketmq-broker: already running (pid $pid)"
    else
        local p
        for p in "$BROKER_PORT" $((BROKER_PORT - 2)) $((BROKER_PORT + 1)); do require_free_port "$p" rocketmq-broker; done
        if [[ $mode == fresh ]]; then rm -rf "$BK_DIR"; fi
        mkdir -p "$BK_DIR/store"
        sed "s#@STORE_DIR@#$BK_DIR/store#g" "$RMQ_SRC/broker.conf" >"$BK_CONF"
        rmq_java "$BK_DIR" rmq.broker.logback.xml
        ROCKETMQ_HOME=$BK_DIR start_bg "$BK_PID" "$BK_OUT" "${RMQ_CMD[@]}" \
            org.apache.rocketmq.broker.BrokerStartup -c "$BK_CONF"
    fi
    local logs="$BK_OUT $BK_DIR/logs/rocketmqlogs/broker.log"
    wait_for rocketmq-broker "$BK_PID" "$logs" bk_booted
    log "rocketmq-broker: booted in $(since "$t0"); checking registration, topic route and a send"
    # After a restart on a kept store the first registration can take ~10 s (periodic register).
    wait_for "rocketmq-broker registration with the name server" "$BK_PID" "$logs" bk_registered
    log "rocketmq-broker: registered with the name server"
    # A fresh store has no topics; a kept one usually has both (then one route lookup each).
    if [[ $mode == fresh ]] || ! topic_routed "$APP_TOPIC"; then topic_create "$APP_TOPIC" 4; fi
    if [[ $mode == fresh ]] || ! topic_routed "$PROBE_TOPIC"; then topic_create "$PROBE_TOPIC" 1; fi
    local out
    out=$(mqadmin sendMessage -n "$NAMESRV" -t "$PROBE_TOPIC" -p "readiness probe $(date +%s)")
    # shellcheck disable=SC2086 # logs: space-separated paths
    grep -q SEND_OK <<<"$out" || { printf '%s\n' "$out" >&2; fail "rocketmq-broker: probe send failed" $logs; }
    log "rocketmq-broker: ready on $HOST:$BROKER_PORT (pid $(pid_of "$BK_PID" "$BK_CONF")) in $(since "$t0")"
}

topic_routed() { mqadmin topicRoute -n "$NAMESRV" -t "$1" | grep -q '"brokerName":"broker-a"'; }

# topic_create NAME QUEUES: create (or update) the topic on every broker of DefaultCluster, then wait
# until the name server returns a route for it (a rejected create would otherwise go unnoticed).
topic_create() {
    local topic=$1 queues=${2:-4} out deadline=$((SECONDS + 60))
    [[ $topic =~ ^[A-Za-z0-9_%|-]{1,127}$ ]] || die "invalid topic name: $topic"
    out=$(mqadmin updateTopic -n "$NAMESRV" -c DefaultCluster -t "$topic" -r "$queues" -w "$queues")
    grep -q 'success' <<<"$out" || { printf '%s\n' "$out" >&2; die "rocketmq: creating topic $topic failed"; }
    until topic_routed "$topic"; do
        ((SECONDS < deadline)) || die "rocketmq: no route for topic $topic after 60s"
        sleep 1
    done
    log "rocketmq: topic $topic ready ($queues queues)"
}

rocketmq_up() {
    rmq_fetch
    local fresh=keep
    if ! pid_of "$NS_PID" "$NS_CONF" >/dev/null && ! pid_of "$BK_PID" "$BK_CONF" >/dev/null &&
        [[ ${SEATFLOW_RMQ_KEEP_STORE:-0} != 1 ]]; then
        fresh=fresh
        rm -rf "$NS_DIR" "$ADMIN_HOME"
    fi
    namesrv_start
    broker_start "$fresh"
}

# A graceful broker stop (SIGTERM: flushes the commit log, timer wheel and schedule offsets) takes
# ~5-25 s here: the shutdown hook joins the POP revive threads, whose scan loops ignore the stop flag.
broker_stop() { stop_pid rocketmq-broker "$BK_PID" "$BK_CONF"; }
namesrv_stop() { stop_pid rocketmq-namesrv "$NS_PID" "$NS_CONF"; }
rocketmq_down() { broker_stop; namesrv_stop; }

# ---------------------------------------------------------------------------------------------------

env_lines() {
    local s
    for s in "$@"; do
        case $s in
            mariadb) echo "SEATFLOW_TEST_MYSQL=mysql://seatflow:seatflow@tcp($HOST:$MYSQL_PORT)/seatflow" ;;
            redis) echo "SEATFLOW_TEST_REDIS=redis://$HOST:$REDIS_PORT/0" ;;
            rocketmq) echo "SEATFLOW_TEST_ROCKETMQ=rocketmq://$NAMESRV" ;;
        esac
    done
}

# After `up`: list the listening sockets of our servers (ss -ltnp); every one must be on loopback.
check_loopback_only() {
    local pids=() pid spec line addr bad=0
    for spec in "$DB_PID|$DB_CNF" "$REDIS_PID|redis-server" "$NS_PID|$NS_CONF" "$BK_PID|$BK_CONF"; do
        if pid=$(pid_of "${spec%%|*}" "${spec#*|}"); then pids+=("$pid"); fi
    done
    ((${#pids[@]} > 0)) || return 0
    while read -r line; do
        addr=$(awk '{ print $4 }' <<<"$line")
        if [[ $addr =~ ^(127\.[0-9.]+|\[::1\]|\[::ffff:127\.[0-9.]+\]):[0-9]+$ ]]; then
            log "listening: $addr $(grep -o 'users:.*' <<<"$line")"
        else
            log "ERROR: listening on a non-loopback address: $line"
            bad=1
        fi
    done < <(ss -Hltnp | grep -E "pid=($(IFS='|'; echo "${pids[*]}")),")
    ((bad == 0)) || die "a service listens on a non-loopback address (see above)"
}

status_line() {
    local name=$1 file=$2 pattern=$3 ports=$4 pid
    if pid=$(pid_of "$file" "$pattern"); then
        printf '%-18s running  pid %-8s %s\n' "$name" "$pid" "$ports"
    else
        printf '%-18s stopped\n' "$name"
    fi
}

cmd_status() {
    status_line mariadb "$DB_PID" "$DB_CNF" "$HOST:$MYSQL_PORT"
    status_line redis "$REDIS_PID" redis-server "$HOST:$REDIS_PORT"
    status_line rocketmq-namesrv "$NS_PID" "$NS_CONF" "$NAMESRV"
    status_line rocketmq-broker "$BK_PID" "$BK_CONF" "$HOST:$BROKER_PORT (+$((BROKER_PORT - 2)), +$((BROKER_PORT + 1)))"
}

# pick_services [SERVICE...]: validated list in SVCS (all three when none given).
pick_services() {
    SVCS=("$@")
    if ((${#SVCS[@]} == 0)); then SVCS=(mariadb redis rocketmq); fi
    local s
    for s in "${SVCS[@]}"; do
        case $s in mariadb | redis | rocketmq) ;; *) die "unknown service '$s' (mariadb, redis, rocketmq)" ;; esac
    done
}

# running_services: those of mariadb/redis/rocketmq whose processes are up (rocketmq: the name server).
running_services() {
    local out=()
    if pid_of "$DB_PID" "$DB_CNF" >/dev/null; then out+=(mariadb); fi
    if pid_of "$REDIS_PID" redis-server >/dev/null; then out+=(redis); fi
    if pid_of "$NS_PID" "$NS_CONF" >/dev/null; then out+=(rocketmq); fi
    echo "${out[@]}"
}

cmd_up() {
    local t0 s
    local -a pkgs running
    t0=$(now)
    pick_services "$@"
    read -r -a pkgs <<<"$(missing_packages "${SVCS[@]}")"
    apt_install "${pkgs[@]}"
    for s in "${SVCS[@]}"; do "${s}_up"; done
    log "all ready in $(since "$t0")"
    check_loopback_only
    # $SVC_DIR/env: the lines for everything running now, for `set -a; . .services/env`.
    read -r -a running <<<"$(running_services)"
    env_lines "${running[@]}" >"$SVC_DIR/env"
    env_lines "${SVCS[@]}"
}

cmd_down() {
    local i
    pick_services "$@"
    # Reverse order: the broker before its name server.
    for ((i = ${#SVCS[@]} - 1; i >= 0; i--)); do "${SVCS[i]}_down"; done
    local -a running
    read -r -a running <<<"$(running_services)"
    env_lines "${running[@]}" >"$SVC_DIR/env"
}

main() {
    local cmd=${1:-}
    (($# > 0)) && shift
    case $cmd in
        status) cmd_status; return ;;
        env) env_lines mariadb redis rocketmq; return ;;
        mqadmin) rmq_fetch; mqadmin "$@"; return ;;
        up | down | start | stop | restart | topic) ;;
        *) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; [[ $cmd == help || $cmd == -h ]]; return ;;
    esac
    mkdir -p "$SVC_DIR" "$CACHE_DIR"
    # One invocation at a time (parallel CI steps, a test restarting the broker).
    exec 9>"$SVC_DIR/.lock"
    flock -w 900 9 || die "another scripts/services.sh run holds $SVC_DIR/.lock"
    case $cmd in
        up) cmd_up "$@" ;;
        down) cmd_down "$@" ;;
        start | stop | restart)
            (($# == 1)) || die "usage: $0 $cmd mariadb|redis|rocketmq|rocketmq-namesrv|rocketmq-broker"
            local svc=$1
            if [[ $cmd == stop || $cmd == restart ]]; then
                case $svc in
                    mariadb | redis | rocketmq) "${svc}_down" ;;
                    rocketmq-broker) broker_stop ;;
                    rocketmq-namesrv) namesrv_stop ;;
                    *) die "unknown service '$svc'" ;;
                esac
            fi
            if [[ $cmd == start || $cmd == restart ]]; then
                case $svc in
                    mariadb | redis) cmd_up "$svc" ;;
                    # start/restart never wipe the store (unlike a cold `up rocketmq`).
                    rocketmq | rocketmq-broker) rmq_fetch; namesrv_start; broker_start keep ;;
                    rocketmq-namesrv) rmq_fetch; namesrv_start ;;
                    *) die "unknown service '$svc'" ;;
                esac
            fi
            ;;
        topic)
            (($# >= 1)) || die "usage: $0 topic NAME [QUEUES]"
            rmq_fetch
            pid_of "$BK_PID" "$BK_CONF" >/dev/null || die "rocketmq-broker is not running (scripts/services.sh up rocketmq)"
            topic_create "$1" "${2:-4}"
            ;;
    esac
}

# Sourced (scripts/cluster.sh reuses the functions above): define only.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then main "$@"; fi
