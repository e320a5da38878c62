#!/usr/bin/env bash
# Sluice sysbench comparison: direct MariaDB vs HAProxy (tcp) vs Sluice, interleaved.
#
#   benchmark/sysbench/run.sh [options]          (see --help)
#
# Everything runs on 127.0.0.1. Every process this script starts (HAProxy, Sluice,
# samplers, sysbench) is stopped on exit, including Ctrl-C. Results go to
# benchmark/results/<timestamp>/ (raw CSV, JSON, per-run sysbench logs, table, chart), which git ignores: of a run
# a doc cites, only summary.md is committed (benchmark/README.md, decision 121).
set -Eeuo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/../.." && pwd)
ORIG_ARGS="$*"
HOST=127.0.0.1   # loopback only, on purpose: not an option

# ---------------------------------------------------------------- defaults
TARGETS="direct,haproxy,sluice"
WORKLOADS="a"
THREADS=""            # empty = per-group defaults (a: 16,64; b: 16)
TIME=20
REPEATS=3
ROTATE=1              # rotate the order of targets from round to round (--fixed-order: off)
WARMUP=5              # seconds per target before each workload/threads group; 0 = none
TABLES=4
TABLE_SIZE=10000
RANGE_FACTOR=5        # workload b: table_size >= RANGE_FACTOR * largest range_size
MYSQL_PORT=3306
MYSQL_USER=root
MYSQL_PASSWORD=""
HAPROXY_PORT=13306
SLUICE_PORT=13307
SLUICE_TX_PORT=13308  # target sluice_tx: a second Sluice with pooling TRANSACTION (issue #8)
WORKER_THREADS=2
SLUICE_DIST=""
SLUICE_TX_DIST=""     # --sluice-tx-dist: the sluice_tx leg runs another build (an A/B of two builds)
POOLING=session       # pooling.mode of the sluice leg (sluice_tx is always transaction)
MAX_POOL_SIZE=""      # dataSources.ds_0.maxPoolSize; empty = 300, or the largest thread count if higher
POOL_IDLE_MS=2000     # dataSources.ds_0.idleTimeoutMilliseconds: idle pooled connections close between runs
POOL_IDLE_SET=0       # --pool-idle-timeout-ms given (else a run of d alone with --churn-blocks keeps 600000)
IDLE_DB=auto          # workload c: schema the idle clients name at login; auto = sbtest with a TRANSACTION leg
PS_MODE=auto          # sysbench --db-ps-mode: auto = server-side prepared statements
SSL=0                 # --ssl: sysbench --mysql-ssl=on against Sluice, whose TLS is then required
SSL_PROVIDER=AUTO     # Sluice server.tls.provider with --ssl: AUTO, OPENSSL or JDK
IDLE_COUNTS="1000,5000,10000,15000"   # workload c; 0 (the baseline) is always added
CHURN_RATES="100,200,300"             # workload d; 0 (the baseline) is always added
CHURN_WARMUP=0                        # workload d: seconds of churn before the counting window opens
CHURN_BLOCKS=0                        # workload d: 0 = churn_0 baseline runs; N = churn in N 5-s blocks of one run
CHURN_PREWARM=0                       # workload d: seconds of churn at the highest rate in each target's warm-up
IDLE_CONCURRENCY=200                  # logins in flight while opening the idle connections
IDLE_SETTLE=1         # workload c: seconds between the last idle login and sysbench's start
IDLE_CLIENT=python    # workload c: python (idle_clients.py, raw logins) or jdbc (MySQL Connector/J, default URL)
SLUICE_SCHED=""             # empty = bin/start.sh's default (batch, decision 059)
HAPROXY_SCHED=normal         # as the Debian package starts HAProxy
SLUICE_TX_SCHED=""          # empty = as the sluice leg
SLUICE_JAVA_OPTS=""
SLUICE_JAVA_OPTS_SET=0
SLUICE_CONFIG_EXTRA=""  # YAML appended to the generated config.yaml, e.g. "metrics: {enabled: false}"
SLUICE_TX_POOLING=transaction  # pooling.mode of the sluice_tx leg (the second Sluice process)
SLUICE_TX_CONFIG_EXTRA=""      # YAML appended to the sluice_tx leg's config.yaml only
SLUICE_TX_JAVA_OPTS=""         # JAVA_OPTS of the sluice_tx leg only
SLUICE_TX_JAVA_OPTS_SET=0
# JAVA_OPTS for Sluice when workload c runs and --sluice-java-opts is not given: the issue's
# -Xmx512m, start.sh's other defaults, but without -Xms512m/-XX:+AlwaysPreTouch, which would
# make the RSS 512 MiB+ whatever the connections cost (c measures RSS).
SLUICE_JAVA_OPTS_C="-Xmx512m -XX:+UseG1GC -XX:MaxGCPauseMillis=50 -Dio.netty.leakDetection.level=disabled"
CAPTURE=0                              # --capture: add target sluice_capture (issue #7)
CAPTURE_ADMIN=127.0.0.1:3080           # Sluice's admin API, which starts and stops captures
CAPTURE_COMPRESS=true
export SLUICE_ADMIN_TOKEN=${SLUICE_ADMIN_TOKEN:-bench-$RANDOM$RANDOM}   # read by bin/sluice-ctl too
REPORT_INTERVAL=0                      # sysbench --report-interval; 10 with --capture (minimum 10 s QPS)
RESULTS_ROOT="$REPO_ROOT/benchmark/results"
WORK_ROOT="$SCRIPT_DIR/work"
INSTALL=1
KEEP_WORK=0

usage() {
  cat <<EOF
Usage: benchmark/sysbench/run.sh [options]

Compares sysbench QPS/latency directly against MariaDB, through HAProxy (tcp mode)
and through Sluice (from its distribution), interleaving the targets run by run.

Targets and proxies
  --targets LIST         comma list of direct,haproxy,sluice,sluice_tx,sluice_capture [$TARGETS]
                         sluice_tx (also spelled sluice-tx): a second Sluice, started from
                         the same distribution on --sluice-tx-port with pooling TRANSACTION,
                         measured in the same rounds as sluice (SESSION vs TRANSACTION)
  --pooling MODE         pooling.mode of the sluice leg: session|transaction [$POOLING]
  --max-pool-size N      maxPoolSize of each Sluice leg's data source [300, or the largest
                         thread count if higher]: the bound a TRANSACTION leg is checked
                         against. A SESSION leg (one backend connection per client) is
                         raised to threads + idle clients naming a schema + churn rate + 50
  --pool-idle-timeout-ms N
                         idleTimeoutMilliseconds of the data source [$POOL_IDLE_MS]: a leg's
                         idle pooled connections close before the next leg runs, so they do
                         not count in its server_conns_max (0 = keep them, Sluice's default)
  --capture              add target sluice_capture: the same Sluice with a traffic capture
                         running during each measured run (started and stopped through
                         bin/sluice-ctl and the admin API); sysbench reports every 10 s and
                         capture.md compares average and minimum 10 s QPS with sluice
  --capture-admin H:P    Sluice's admin API for --capture               [$CAPTURE_ADMIN]
  --capture-compress B   compress the capture files (zstd; true|false) [$CAPTURE_COMPRESS]
  --sluice-dist PATH     sluice-*.tar.gz or an unpacked distribution dir
                         [distribution/target/sluice-*.tar.gz]
  --worker-threads N     Sluice server.workerThreads = HAProxy nbthread [$WORKER_THREADS]
  --sluice-java-opts S   JAVA_OPTS for Sluice's bin/start.sh [start.sh defaults; with
                         workload c: "$SLUICE_JAVA_OPTS_C"]
  --sluice-sched P       SLUICE_CPU_SCHEDULING for Sluice's bin/start.sh: batch or normal
                         [start.sh's default, batch]
  --sluice-tx-sched P    as --sluice-sched, for the sluice_tx leg only [as the sluice leg]:
                         with --sluice-tx-pooling session, an A/B of the policy in one run
  --haproxy-sched P      scheduling policy HAProxy runs under: normal (as Debian's package
                         starts it) or batch (SCHED_BATCH, as start.sh runs Sluice; the
                         like-for-like check of decision 059)           [$HAPROXY_SCHED]
  --sluice-tx-pooling MODE
                         pooling.mode of the sluice_tx leg [$SLUICE_TX_POOLING]; with
                         session and --sluice-tx-config-extra, sluice_tx is an A/B leg:
                         the same Sluice with one setting changed, measured in the same
                         rounds as sluice (e.g. metrics on vs off)
  --sluice-tx-config-extra FILE
                         YAML appended to the sluice_tx leg's config.yaml only
  --sluice-tx-dist PATH  the sluice_tx leg runs this distribution (tar.gz or unpacked folder)
                         instead of --sluice-dist's: with --sluice-tx-pooling session, an A/B
                         of two builds measured in the same rounds (e.g. before and after a
                         change to the session core); compare with pool_runs.py --a sluice
                         --b sluice_tx
  --sluice-tx-java-opts S
                         JAVA_OPTS of the sluice_tx leg only [as the sluice leg]: an A/B of JVM
                         or Netty settings (e.g. -Dio.netty.allocator.type=pooled)
  --sluice-config-extra FILE
                         YAML appended to the generated Sluice config.yaml (top-level
                         sections it does not already have: metrics, slowQueryLog, ...).
                         Metrics on vs off: run once without and once with a file holding
                         "metrics: {enabled: false}" (docs/benchmarks.md)
                         (the sluice_tx leg takes --sluice-tx-config-extra in its place
                         when both are given)
  --haproxy-port P       [$HAPROXY_PORT]      --sluice-port P   [$SLUICE_PORT]
  --sluice-tx-port P     port of the sluice_tx leg                   [$SLUICE_TX_PORT]
  --mysql-port P         MariaDB port on 127.0.0.1                   [$MYSQL_PORT]

Workloads
  --workloads LIST       comma list of groups and/or names            [$WORKLOADS]
                           a = point_select,read_only,write_only,read_write (16,64 threads)
                           b = range_10,range_100,range_1000,range_10000   (16 threads)
                               (oltp_read_only, skip_trx, one simple range of N rows)
                           c = idle_0,idle_N...: oltp_point_select (16 threads) while N idle
                               client connections are held open (no schema, no command)
                           d = churn_0,churn_R...: oltp_point_select (16 threads) while a side
                               client opens+closes R connections/s (schema sbtest, SELECT 1)
                           idle_N / churn_R name single points (idle_0 / churn_0, the
                           baselines for the ratios, are always added)
                           digests_N = point selects of N distinct statement shapes as text
                               (digests.lua; 16 threads): digest statistics at N entries
  --threads LIST         comma list overriding the per-group thread counts
  --time S               seconds per measured run                     [$TIME]
  --repeats R            rounds of one run per target; round r starts at the r-th target
                         (direct, haproxy, sluice; haproxy, sluice, direct; ...)  [$REPEATS]
  --fixed-order          every round in the order of --targets (the harness's order before
                         2026-11-23)
  --warmup S             unrecorded warm-up per target per group, 0=off [$WARMUP]
  --ps-mode auto|disable sysbench --db-ps-mode                        [$PS_MODE]
  --ssl                  sysbench connects to Sluice with --mysql-ssl=on, and Sluice runs
                         with server.tls.requireSecureTransport (a silent fallback to plain
                         text would be measured as TLS). direct and haproxy stay plain text:
                         they are the baselines the TLS figures are read against.
                         Without --ssl, Sluice runs with server.tls.enabled: false.
  --ssl-provider P       Sluice server.tls.provider with --ssl: AUTO, OPENSSL or JDK [$SSL_PROVIDER]
  --idle-counts LIST     workload c: idle connections per point       [$IDLE_COUNTS]
  --idle-concurrency N   workload c: logins in flight while opening    [$IDLE_CONCURRENCY]
  --idle-client KIND     workload c: python (raw logins that ask for CLIENT_SESSION_TRACK, as
                         libmariadb does) or jdbc (MySQL Connector/J with a default URL, which
                         does not; needs benchmark/target/benchmarks.jar, built by
                         ./mvnw -Pbenchmark -pl benchmark -am package -DskipTests)  [$IDLE_CLIENT]
  --idle-settle S        workload c: seconds to wait after the last idle login before sysbench
                         starts, so the logins' JIT and GC work (in Sluice and in a jdbc idle
                         client) is over before the window opens     [$IDLE_SETTLE]
  --idle-db DB|none|auto workload c: schema the idle clients name at login [$IDLE_DB]
                         auto = sbtest when a leg pools by TRANSACTION (sluice_tx or
                         --pooling transaction), so that a SESSION leg holds one backend
                         connection per idle client as it would for an application;
                         none otherwise (Sluice binds no backend for a schema-less login)
  --churn-rates LIST     workload d: connections opened+closed per s   [$CHURN_RATES]
  --churn-prewarm S      workload d: each target's warm-up lasts S s with churn at the highest
                         rate, so that a JVM proxy's login path is compiled first [$CHURN_PREWARM]
  --churn-warmup S       workload d: seconds the churn runs before new server
                         connections are counted (a proxy's pool grows to the
                         load's peak first)                            [$CHURN_WARMUP]
  --churn-blocks N       workload d, paired within one run: each churn_R point is one
                         sysbench run of 4 + 10*N s with the churn on in N blocks of
                         5 s (from 4 s, every 10 s) and off in between; with/without
                         = mean QPS of the on seconds / the off seconds, both read from
                         sysbench's 1-s reports (the seconds around a switch dropped).
                         No churn_0 runs. 0 = a separate churn_0 run per round, which
                         on a small shared host varies by ±20% from run to run [$CHURN_BLOCKS].
                         A run of d alone then keeps Sluice's pools warm between blocks
                         and rounds (--pool-idle-timeout-ms defaults to Sluice's own 600000)

Data
  --tables N             sysbench tables                              [$TABLES]
  --table-size N         rows per table (raised to ${RANGE_FACTOR}x the largest range
                         size when workload b is selected)            [$TABLE_SIZE]

Other
  --results-dir DIR      parent of the <timestamp>/ result folder  [benchmark/results]
  --no-install           do not apt-get install missing sysbench/haproxy
  --keep-work            keep the scratch dir under benchmark/sysbench/work/
  -h, --help

Acceptance run (issue): oltp_read_write, 16 threads, 60 s through Sluice, zero errors:
  benchmark/sysbench/run.sh --workloads read_write --threads 16 --time 60 --repeats 1 --targets sluice

Long connections (c) and short connections (d), full runs:
  benchmark/sysbench/run.sh --workloads c --sluice-java-opts "$SLUICE_JAVA_OPTS_C"
  benchmark/sysbench/run.sh --workloads d
Points a target cannot reach within this machine's open-files limits (e.g. HAProxy needs 2 fds
per connection) are skipped, logged, and listed in skipped.csv and the report.

Transaction pooling (issue #8), SESSION vs TRANSACTION in one run:
  benchmark/sysbench/run.sh --workloads c --idle-counts 15000 --threads 64 --targets sluice,sluice_tx --max-pool-size 64 --idle-db sbtest
  benchmark/sysbench/run.sh --workloads d --churn-rates 300 --targets direct,sluice,sluice_tx --max-pool-size 64
EOF
}

log()  { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die()  { log "ERROR: $*"; exit 1; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --targets) TARGETS=$2; shift 2 ;;
    --sluice-dist) SLUICE_DIST=$2; shift 2 ;;
    --sluice-tx-dist) SLUICE_TX_DIST=$2; shift 2 ;;
    --capture) CAPTURE=1; shift ;;
    --capture-admin) CAPTURE_ADMIN=$2; shift 2 ;;
    --capture-compress) CAPTURE_COMPRESS=$2; shift 2 ;;
    --worker-threads) WORKER_THREADS=$2; shift 2 ;;
    --haproxy-port) HAPROXY_PORT=$2; shift 2 ;;
    --sluice-port) SLUICE_PORT=$2; shift 2 ;;
    --sluice-tx-port) SLUICE_TX_PORT=$2; shift 2 ;;
    --pooling) POOLING=$2; shift 2 ;;
    --max-pool-size) MAX_POOL_SIZE=$2; shift 2 ;;
    --pool-idle-timeout-ms) POOL_IDLE_MS=$2; POOL_IDLE_SET=1; shift 2 ;;
    --idle-db) IDLE_DB=$2; shift 2 ;;
    --mysql-port) MYSQL_PORT=$2; shift 2 ;;
    --workloads) WORKLOADS=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --time) TIME=$2; shift 2 ;;
    --repeats) REPEATS=$2; shift 2 ;;
    --fixed-order) ROTATE=0; shift ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --ps-mode) PS_MODE=$2; shift 2 ;;
    --ssl) SSL=1; shift ;;
    --ssl-provider) SSL_PROVIDER=$2; shift 2 ;;
    --idle-counts) IDLE_COUNTS=$2; shift 2 ;;
    --idle-concurrency) IDLE_CONCURRENCY=$2; shift 2 ;;
    --idle-client) IDLE_CLIENT=$2; shift 2 ;;
    --idle-settle) IDLE_SETTLE=$2; shift 2 ;;
    --churn-rates) CHURN_RATES=$2; shift 2 ;;
    --churn-warmup) CHURN_WARMUP=$2; shift 2 ;;
    --churn-prewarm) CHURN_PREWARM=$2; shift 2 ;;
    --churn-blocks) CHURN_BLOCKS=$2; shift 2 ;;
    --sluice-java-opts) SLUICE_JAVA_OPTS=$2; SLUICE_JAVA_OPTS_SET=1; shift 2 ;;
    --sluice-sched) SLUICE_SCHED=$2; shift 2 ;;
    --haproxy-sched) HAPROXY_SCHED=$2; shift 2 ;;
    --sluice-tx-sched) SLUICE_TX_SCHED=$2; shift 2 ;;
    --sluice-config-extra) SLUICE_CONFIG_EXTRA=$2; shift 2 ;;
    --sluice-tx-pooling) SLUICE_TX_POOLING=$(tr 'A-Z' 'a-z' <<<"$2"); shift 2 ;;
    --sluice-tx-config-extra) SLUICE_TX_CONFIG_EXTRA=$2; shift 2 ;;
    --sluice-tx-java-opts) SLUICE_TX_JAVA_OPTS=$2; SLUICE_TX_JAVA_OPTS_SET=1; shift 2 ;;
    --tables) TABLES=$2; shift 2 ;;
    --table-size) TABLE_SIZE=$2; shift 2 ;;
    --results-dir) RESULTS_ROOT=$2; shift 2 ;;
    --no-install) INSTALL=0; shift ;;
    --keep-work) KEEP_WORK=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown option: $1" ;;
  esac
done

is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }
[[ -z $SLUICE_SCHED || $SLUICE_SCHED == batch || $SLUICE_SCHED == normal ]] || die "--sluice-sched: batch or normal (got '$SLUICE_SCHED')"
[[ -z $SLUICE_TX_SCHED || $SLUICE_TX_SCHED == batch || $SLUICE_TX_SCHED == normal ]] || die "--sluice-tx-sched: batch or normal (got '$SLUICE_TX_SCHED')"
[[ $HAPROXY_SCHED == batch || $HAPROXY_SCHED == normal ]] || die "--haproxy-sched: batch or normal (got '$HAPROXY_SCHED')"
for v in WORKER_THREADS HAPROXY_PORT SLUICE_PORT SLUICE_TX_PORT MYSQL_PORT TIME REPEATS WARMUP TABLES TABLE_SIZE IDLE_CONCURRENCY IDLE_SETTLE POOL_IDLE_MS; do
  is_uint "${!v}" || die "--$(tr 'A-Z_' 'a-z-' <<<"$v") must be a non-negative integer (got '${!v}')"
done
(( TIME > 0 && REPEATS > 0 && TABLES > 0 && WORKER_THREADS > 0 )) || die "--time, --repeats, --tables, --worker-threads must be > 0"
[[ $PS_MODE == auto || $PS_MODE == disable ]] || die "--ps-mode must be auto or disable"
[[ $SSL_PROVIDER == AUTO || $SSL_PROVIDER == OPENSSL || $SSL_PROVIDER == JDK ]] \
  || die "--ssl-provider must be AUTO, OPENSSL or JDK"
[[ $CAPTURE_COMPRESS == true || $CAPTURE_COMPRESS == false ]] || die "--capture-compress must be true or false"
POOLING=$(tr 'A-Z' 'a-z' <<<"$POOLING")
[[ $POOLING == session || $POOLING == transaction ]] || die "--pooling must be session or transaction"
if [[ -n $MAX_POOL_SIZE ]]; then
  is_uint "$MAX_POOL_SIZE" && (( MAX_POOL_SIZE > 0 )) || die "--max-pool-size must be a positive integer"
fi
[[ $IDLE_DB =~ ^[A-Za-z0-9_]+$ ]] || die "--idle-db must be a schema name, none or auto"
[[ $IDLE_CLIENT == python || $IDLE_CLIENT == jdbc ]] || die "--idle-client must be python or jdbc"
(( SLUICE_TX_PORT != SLUICE_PORT )) || die "--sluice-tx-port must differ from --sluice-port"

# ---------------------------------------------------------------- targets
declare -a TARGET_LIST=()
(( CAPTURE )) && TARGETS="$TARGETS,sluice_capture"
IFS=',' read -r -a _t <<<"$TARGETS"
for t in "${_t[@]}"; do
  case "$t" in
    direct|haproxy|sluice|sluice_capture|sluice_tx) TARGET_LIST+=("$t") ;;
    sluice-tx) TARGET_LIST+=(sluice_tx) ;;
    "") ;;
    *) die "unknown target '$t' (direct, haproxy, sluice, sluice_tx, sluice_capture)" ;;
  esac
done
(( ${#TARGET_LIST[@]} > 0 )) || die "no targets"
# Always run in the canonical order direct -> haproxy -> sluice within a round.
declare -a ORDERED=()
for t in direct haproxy sluice sluice_tx sluice_capture; do
  for u in "${TARGET_LIST[@]}"; do [[ $t == "$u" ]] && { ORDERED+=("$t"); break; }; done
done
TARGET_LIST=("${ORDERED[@]}")
has_target() { local t; for t in "${TARGET_LIST[@]}"; do [[ $t == "$1" ]] && return 0; done; return 1; }
# sluice_capture is the same Sluice process as sluice, measured while a capture runs.
has_sluice() { has_target sluice || has_target sluice_capture; }
# sluice_tx is a second Sluice process (its own copy of the distribution, port and pool) whose config says
# pooling: {mode: transaction} (--sluice-tx-pooling); it runs next to the first one, so both are measured in the
# same rounds. With --sluice-tx-config-extra it is the B side of an A/B comparison of one setting.
has_sluice_tx() { has_target sluice_tx; }
[[ $SLUICE_TX_POOLING == session || $SLUICE_TX_POOLING == transaction ]] \
  || die "--sluice-tx-pooling must be session or transaction"
if [[ -n $SLUICE_TX_CONFIG_EXTRA && ! -f $SLUICE_TX_CONFIG_EXTRA ]]; then
  die "--sluice-tx-config-extra $SLUICE_TX_CONFIG_EXTRA: no such file"
fi
if [[ -n $SLUICE_TX_DIST && ! -e $SLUICE_TX_DIST ]]; then
  die "--sluice-tx-dist $SLUICE_TX_DIST does not exist"
fi
if has_sluice_tx && has_sluice && [[ $POOLING == "$SLUICE_TX_POOLING" && -z $SLUICE_TX_CONFIG_EXTRA && -z $SLUICE_TX_DIST ]] \
    && (( ! SLUICE_TX_JAVA_OPTS_SET )) && [[ -z $SLUICE_TX_SCHED || $SLUICE_TX_SCHED == "$SLUICE_SCHED" ]]; then
  die "targets sluice and sluice_tx would run the same config (pooling $POOLING): change --pooling, --sluice-tx-pooling, --sluice-tx-config-extra, --sluice-tx-dist, --sluice-tx-java-opts or --sluice-tx-sched"
fi
pooling_of() {  # pooling_of TARGET -> session|transaction for a Sluice leg, empty for direct/haproxy
  case "$1" in sluice|sluice_capture) echo "$POOLING" ;; sluice_tx) echo "$SLUICE_TX_POOLING" ;; *) echo "" ;; esac
}
ANY_TX=0
{ { has_sluice_tx && [[ $SLUICE_TX_POOLING == transaction ]]; } || { has_sluice && [[ $POOLING == transaction ]]; }; } && ANY_TX=1
if [[ $IDLE_DB == auto ]]; then
  (( ANY_TX )) && IDLE_DB=sbtest || IDLE_DB=none
fi
if has_target sluice_capture; then REPORT_INTERVAL=10; fi

# ---------------------------------------------------------------- workloads
# A workload name maps to: sysbench test name + extra args + default thread counts.
# Groups c and d run a side load (idle connections / churn) next to oltp_point_select;
# see sideload_start / sideload_stop below.
WL_A="point_select read_only write_only read_write"
WL_B="range_10 range_100 range_1000 range_10000"
declare -a WL_LIST=()
IDLE_SET=""    # numbers of idle connections (workload c), 0 = baseline
CHURN_SET=""   # churn rates (workload d), 0 = baseline
add_list() {  # add_list VAR "1,2,3" OPTION: validated unsigned ints appended to VAR
  local var=$1 list=$2 opt=$3 x
  IFS=',' read -r -a _l <<<"$list"
  for x in "${_l[@]}"; do
    [[ -z $x ]] && continue
    is_uint "$x" || die "$opt: '$x' is not a non-negative integer"
    printf -v "$var" '%s %s' "${!var}" "$((10#$x))"
  done
}
IFS=',' read -r -a _w <<<"$WORKLOADS"
is_uint "$CHURN_BLOCKS" || die "--churn-blocks must be a whole number"
churn_base() {  # the baseline point of workload d: churn_0, unless the blocks of one run pair it
  (( CHURN_BLOCKS > 0 )) || echo "0,"
}
churn_blocks_of() {  # churn_blocks_of WORKLOAD: the churn blocks of its run (--churn-blocks for churn_R, R > 0), else 0
  if [[ $1 == churn_* ]] && (( CHURN_BLOCKS > 0 && ${1#churn_} > 0 )); then echo "$CHURN_BLOCKS"; else echo 0; fi
}
for w in "${_w[@]}"; do
  case "$w" in
    a) for x in $WL_A; do WL_LIST+=("$x"); done ;;
    b) for x in $WL_B; do WL_LIST+=("$x"); done ;;
    all) for x in $WL_A $WL_B; do WL_LIST+=("$x"); done ;;
    point_select|read_only|write_only|read_write) WL_LIST+=("$w") ;;
    range_[0-9]*) is_uint "${w#range_}" && (( ${w#range_} > 0 )) || die "bad workload '$w'"; WL_LIST+=("$w") ;;
    digests_[0-9]*) is_uint "${w#digests_}" && (( ${w#digests_} > 0 )) || die "bad workload '$w'"; WL_LIST+=("$w") ;;
    c) add_list IDLE_SET "0,$IDLE_COUNTS" --idle-counts ;;
    d) add_list CHURN_SET "$(churn_base)$CHURN_RATES" --churn-rates ;;
    idle_*) add_list IDLE_SET "0,${w#idle_}" "workload $w" ;;
    churn_*) add_list CHURN_SET "$(churn_base)${w#churn_}" "workload $w" ;;
    "") ;;
    *) die "unknown workload '$w' (a, b, c, d, point_select, read_only, write_only, read_write, range_N, idle_N, churn_R, digests_N)" ;;
  esac
done
# The side-load clients of workloads c and d speak plain text, which Sluice refuses when --ssl requires TLS.
if (( SSL )) && [[ -n ${IDLE_SET:-}${CHURN_SET:-} ]]; then
  die "--ssl measures workloads a and b only (the idle/churn side-load clients have no TLS)"
fi
# Groups: every a/b workload is its own group (its repeats interleave the targets); all
# idle_N form one group and all churn_R another, whose rounds interleave the points too
# (idle_0 -> idle_1000 -> ... per target), so "with / without" pairs come from one round.
declare -a GROUPS_LIST=()
for w in "${WL_LIST[@]}"; do GROUPS_LIST+=("$w"); done
MAX_IDLE=0
MAX_CHURN=0
if [[ -n $IDLE_SET ]]; then
  g=""
  for n in $(tr ' ' '\n' <<<"$IDLE_SET" | grep -v '^$' | sort -nu); do g+=" idle_$n"; WL_LIST+=("idle_$n"); MAX_IDLE=$n; done
  GROUPS_LIST+=("${g# }")
  IDLE_SET=$(tr ' ' ',' <<<"${g# }" | sed 's/idle_//g')
fi
if [[ -n $CHURN_SET ]]; then
  g=""
  for n in $(tr ' ' '\n' <<<"$CHURN_SET" | grep -v '^$' | sort -nu); do g+=" churn_$n"; WL_LIST+=("churn_$n"); MAX_CHURN=$n; done
  GROUPS_LIST+=("${g# }")
  CHURN_SET=$(tr ' ' ',' <<<"${g# }" | sed 's/churn_//g')
  is_uint "$CHURN_WARMUP" || die "--churn-warmup must be a whole number of seconds"
  is_uint "$CHURN_PREWARM" || die "--churn-prewarm must be a whole number of seconds"
  (( CHURN_BLOCKS == 0 || CHURN_WARMUP == 0 )) || die "--churn-blocks and --churn-warmup do not go together"
  (( CHURN_BLOCKS > 0 || TIME >= 4 + CHURN_WARMUP )) || die "workload d needs --time >= 4 + --churn-warmup (churn runs from 1 s after the start to 1 s before the end, counted after the warm-up)"
  # Paired d alone: the 2-s default would empty Sluice's pool in every 5-s gap between blocks, so each block would
  # start by regrowing it and d's "no backend handshake per client while the pool has idle connections" would be
  # read on a pool the harness keeps draining. Sluice's own default keeps it, as a user's would. Only when d is the
  # whole run: with other workloads the warm pool would count in their server_conns_max.
  if (( CHURN_BLOCKS > 0 && ! POOL_IDLE_SET && ${#GROUPS_LIST[@]} == 1 )); then
    POOL_IDLE_MS=600000
  fi
fi
(( ${#WL_LIST[@]} > 0 )) || die "no workloads"

wl_test() {   # sysbench test script for a workload
  case "$1" in
    point_select) echo oltp_point_select ;;
    read_only) echo oltp_read_only ;;
    write_only) echo oltp_write_only ;;
    read_write) echo oltp_read_write ;;
    range_*) echo oltp_read_only ;;
    idle_*|churn_*) echo oltp_point_select ;;
    digests_*) echo "$SCRIPT_DIR/digests.lua" ;;
  esac
}
wl_args() {   # extra sysbench args for a workload
  case "$1" in
    digests_*) echo "--shapes=${1#digests_}" ;;
    range_*) echo "--skip_trx=true --point_selects=0 --sum_ranges=0 --order_ranges=0 --distinct_ranges=0 --simple_ranges=1 --range_size=${1#range_}" ;;
    *) echo "" ;;
  esac
}
wl_threads() {  # default thread counts for a workload
  if [[ -n $THREADS ]]; then tr ',' ' ' <<<"$THREADS"; return; fi
  case "$1" in
    range_*|idle_*|churn_*|digests_*) echo 16 ;;
    *) echo "16 64" ;;
  esac
}
SIDELOAD_PID=""   # side load of workloads c/d (see sideload_start below)
sideload_stop() { :; }   # replaced below; cleanup may run before that

MAX_THREADS=1
for w in "${WL_LIST[@]}"; do
  for th in $(wl_threads "$w"); do
    is_uint "$th" && (( th > 0 )) || die "bad thread count '$th'"
    (( th > MAX_THREADS )) && MAX_THREADS=$th
  done
done
# Workload b returns `range_size` rows only when the random start id leaves room:
# sysbench picks id uniformly in [1, table_size] and scans id..id+range-1.
MAX_RANGE=0
for w in "${WL_LIST[@]}"; do
  [[ $w == range_* ]] && (( ${w#range_} > MAX_RANGE )) && MAX_RANGE=${w#range_}
done
if (( MAX_RANGE > 0 && TABLE_SIZE < RANGE_FACTOR * MAX_RANGE )); then
  log "range workloads selected: table size raised from $TABLE_SIZE to $((RANGE_FACTOR * MAX_RANGE)) rows (${RANGE_FACTOR}x range_$MAX_RANGE)"
  TABLE_SIZE=$((RANGE_FACTOR * MAX_RANGE))
fi

# maxPoolSize per Sluice leg. --max-pool-size is the bound a TRANSACTION leg is measured against. In SESSION mode
# every client session with a schema or a command holds a backend connection of its own, so a SESSION leg's pool
# is raised to what the run's clients need (sysbench threads, idle clients that name a schema, churn clients in
# flight): a smaller one would only make logins wait and fail, and there would be nothing to compare.
POOL_TX=${MAX_POOL_SIZE:-$(( MAX_THREADS > 300 ? MAX_THREADS : 300 ))}
POOL_SESSION=$POOL_TX
_need=$(( MAX_THREADS + 50 + MAX_CHURN ))
[[ $IDLE_DB != none ]] && _need=$(( _need + MAX_IDLE ))
if (( POOL_SESSION < _need )); then
  POOL_SESSION=$_need
  if { has_sluice && [[ $POOLING == session ]]; } || { has_sluice_tx && [[ $SLUICE_TX_POOLING == session ]]; }; then
    log "SESSION leg: maxPoolSize $POOL_TX raised to $POOL_SESSION (one backend connection per client: $MAX_THREADS threads$( [[ $IDLE_DB != none ]] && (( MAX_IDLE > 0 )) && echo " + $MAX_IDLE idle clients with schema $IDLE_DB" )$( (( MAX_CHURN > 0 )) && echo " + $MAX_CHURN churn/s" ) + 50)"
  fi
fi
pool_size_of() {  # maxPoolSize of a Sluice leg
  case "$(pooling_of "$1")" in session) echo "$POOL_SESSION" ;; transaction) echo "$POOL_TX" ;; *) echo "" ;; esac
}

# ---------------------------------------------------------------- cleanup
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
WORK="$WORK_ROOT/$STAMP"
OUT="$RESULTS_ROOT/$STAMP"
HAPROXY_PIDFILE="$WORK/haproxy.pid"
HAPROXY_PID=""
SLUICE_HOME=""
SLUICE_PID=""
SLUICE_LAUNCHER_PID=""
SLUICE_TX_HOME=""     # the sluice_tx leg: a second Sluice (pooling TRANSACTION)
SLUICE_TX_PID=""
SLUICE_TX_LAUNCHER_PID=""
SLUICE_ADMIN=""       # HOST:PORT of each Sluice's admin API (found at start)
SLUICE_TX_ADMIN=""
METRICS_PID=""        # the /metrics sampler of a Sluice leg (db_sampler_start)
DBSTAT_CLIENT_PID=""  # the persistent mariadb client of the status sampler (db_sampler_start)
DBSTAT_TICKER_PID=""
DBSTAT_FD=""
SAMPLER_PID=""
SYSBENCH_PID=""
MAXCONN_RESTORE=""

stop_pid() {  # stop_pid PID NAME [SECS]: TERM, wait up to SECS (10) s, then KILL; only this pid
  local pid=$1 name=$2 secs=${3:-10} i
  [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < secs * 10; i++)); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  log "$name (pid $pid) did not stop on TERM; sending KILL"
  kill -KILL "$pid" 2>/dev/null || true
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  set +e
  [[ -n $SYSBENCH_PID ]] && stop_pid "$SYSBENCH_PID" sysbench
  [[ -n $SAMPLER_PID ]] && { kill "$SAMPLER_PID" 2>/dev/null; wait "$SAMPLER_PID" 2>/dev/null; }
  sideload_stop now
  [[ -n $DBSTAT_TICKER_PID ]] && { kill "$DBSTAT_TICKER_PID" 2>/dev/null; wait "$DBSTAT_TICKER_PID" 2>/dev/null; }
  [[ -n $DBSTAT_CLIENT_PID ]] && stop_pid "$DBSTAT_CLIENT_PID" "status sampler" 2
  [[ -n $METRICS_PID ]] && { kill "$METRICS_PID" 2>/dev/null; wait "$METRICS_PID" 2>/dev/null; }
  if [[ -n $MAXCONN_RESTORE ]]; then
    log "restoring MariaDB max_connections to $MAXCONN_RESTORE"
    sql "$MYSQL_PORT" "SET GLOBAL max_connections = $MAXCONN_RESTORE" >/dev/null 2>&1
  fi
  stop_sluice "$SLUICE_HOME" "$SLUICE_PID" "$SLUICE_LAUNCHER_PID" sluice
  stop_sluice "$SLUICE_TX_HOME" "$SLUICE_TX_PID" "$SLUICE_TX_LAUNCHER_PID" sluice_tx
  if [[ -z $HAPROXY_PID && -f $HAPROXY_PIDFILE ]]; then HAPROXY_PID=$(head -1 "$HAPROXY_PIDFILE"); fi
  if [[ -n $HAPROXY_PID ]]; then log "stopping HAProxy"; stop_pid "$HAPROXY_PID" haproxy; fi
  if (( KEEP_WORK == 0 )) && [[ -d $WORK ]]; then rm -rf "$WORK"; fi
  # a run that died before measuring anything leaves no empty result folder behind
  if [[ -d $OUT ]] && (( $(cat "$OUT/results.csv" 2>/dev/null | wc -l) < 2 )); then rm -rf "$OUT"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT
trap 'log "terminated"; exit 143' TERM

mkdir -p "$WORK"

# Workload c holds up to MAX_IDLE connections: the idle client, HAProxy (2 fds per
# connection), Sluice and this shell's children inherit this soft limit. Without
# CAP_SYS_RESOURCE it can only go up to the hard limit; points that do not fit are
# skipped per target (idle_skip_reason), not failed.
if (( MAX_IDLE > 0 )); then
  ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
fi
NOFILE=$(ulimit -n)
[[ $NOFILE == unlimited ]] && NOFILE=1048576
if (( MAX_IDLE > 0 )); then
  log "open-files limit for the clients and proxies: $NOFILE (hard $(ulimit -Hn))"
fi
HAPROXY_MAXCONN=4096
if (( MAX_IDLE > 0 )); then
  # N idle + sysbench + margin, but HAProxy needs 2 fds per connection under NOFILE
  _want=$(( MAX_IDLE + MAX_THREADS + 200 )) _fit=$(( (NOFILE - 300) / 2 ))
  HAPROXY_MAXCONN=$(( _want < _fit ? _want : _fit ))
  (( HAPROXY_MAXCONN < 4096 )) && HAPROXY_MAXCONN=4096
fi

# ---------------------------------------------------------------- setup
ensure_tools() {
  local missing=()
  command -v sysbench >/dev/null || missing+=(sysbench)
  if has_target haproxy; then command -v haproxy >/dev/null || missing+=(haproxy); fi
  command -v mysql >/dev/null || command -v mariadb >/dev/null || missing+=(mariadb-client)
  if (( ${#missing[@]} > 0 )); then
    (( INSTALL )) || die "missing: ${missing[*]} (run without --no-install, or apt-get install them)"
    log "installing from Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >"$WORK/apt.log" 2>&1 || die "apt-get update failed (see $WORK/apt.log)"
    apt-get install -y -qq "${missing[@]}" >>"$WORK/apt.log" 2>&1 || die "apt-get install failed (see $WORK/apt.log)"
  fi
  # Optional: the chart needs python3-matplotlib for the system python.
  if (( INSTALL )) && [[ -x /usr/bin/python3 ]] && ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
    log "installing python3-matplotlib (Debian) for the chart"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-matplotlib >>"$WORK/apt.log" 2>&1 \
      || { apt-get update -qq >>"$WORK/apt.log" 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-matplotlib >>"$WORK/apt.log" 2>&1; } \
      || log "python3-matplotlib not installed: the report will have no chart"
  fi
}

MYSQL_BIN=$(command -v mysql || command -v mariadb || true)
SQL_COUNT_FILE="$WORK/sql-calls"   # one line per connection this script makes to MariaDB itself (db_sampler_stop)
sql() {  # sql PORT STATEMENT -> tab-separated rows, no header
  local port=$1; shift
  [[ $port == "$MYSQL_PORT" ]] && echo >>"$SQL_COUNT_FILE"
  MYSQL_PWD="$MYSQL_PASSWORD" "$MYSQL_BIN" -h "$HOST" -P "$port" -u "$MYSQL_USER" \
    --protocol=TCP --connect-timeout=5 -N -B -e "$*"
}

ensure_mariadb() {
  if sql "$MYSQL_PORT" 'SELECT 1' >/dev/null 2>&1; then return; fi
  [[ $MYSQL_PORT == 3306 ]] || die "MariaDB not reachable on $HOST:$MYSQL_PORT"
  log "MariaDB not reachable on $HOST:$MYSQL_PORT: starting mariadbd"
  mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd
  local i
  for ((i = 0; i < 60; i++)); do
    sql "$MYSQL_PORT" 'SELECT 1' >/dev/null 2>&1 && return
    sleep 1
  done
  die "MariaDB did not come up on $HOST:$MYSQL_PORT"
}

SB_CONN=()
sb_conn() {  # sysbench connection + data-shape args for a port
  SB_CONN=(--db-driver=mysql --mysql-host="$HOST" --mysql-port="$1" --mysql-user="$MYSQL_USER"
           --mysql-password="$MYSQL_PASSWORD" --mysql-db=sbtest --tables="$TABLES" --table-size="$TABLE_SIZE")
}

prepare_data() {
  sql "$MYSQL_PORT" 'CREATE DATABASE IF NOT EXISTS sbtest'
  # Same shape = tables sbtest1..N all exist with exactly TABLE_SIZE rows.
  local ok=1 i n
  for ((i = 1; i <= TABLES; i++)); do
    n=$(sql "$MYSQL_PORT" "SELECT COUNT(*) FROM sbtest.sbtest$i" 2>/dev/null || echo missing)
    [[ $n == "$TABLE_SIZE" ]] || { ok=0; break; }
  done
  if (( ok )); then
    log "sbtest data present: $TABLES tables x $TABLE_SIZE rows (prepare skipped)"
    return
  fi
  log "preparing sbtest: $TABLES tables x $TABLE_SIZE rows"
  local existing
  existing=$(sql "$MYSQL_PORT" "SELECT table_name FROM information_schema.tables WHERE table_schema='sbtest' AND table_name REGEXP '^sbtest[0-9]+\$'")
  for i in $existing; do sql "$MYSQL_PORT" "DROP TABLE sbtest.\`$i\`"; done
  sb_conn "$MYSQL_PORT"
  sysbench oltp_common "${SB_CONN[@]}" --threads="$(( TABLES < 4 ? TABLES : 4 ))" prepare >"$WORK/prepare.log" 2>&1 \
    || { tail -20 "$WORK/prepare.log" >&2; die "sysbench prepare failed"; }
}

ensure_max_connections() {
  # Each target can hold MAX_THREADS client connections; Sluice also keeps a backend
  # pool. Only ever raise the limit.
  local need=$(( MAX_THREADS * 2 + 100 )) cur
  cur=$(sql "$MYSQL_PORT" 'SELECT @@GLOBAL.max_connections')
  if (( cur < need )); then
    log "raising MariaDB max_connections $cur -> $need"
    sql "$MYSQL_PORT" "SET GLOBAL max_connections = $need"
    cur=$need
  fi
  # Workload c through direct/HAProxy: every idle client is a server connection. This
  # raise is undone on exit (a 15k limit is no state to leave on a shared server).
  if (( MAX_IDLE > 0 )); then
    need=$(( MAX_IDLE + MAX_THREADS * 2 + 200 ))
    if (( cur < need )); then
      log "raising MariaDB max_connections $cur -> $need for workload c (restored on exit)"
      sql "$MYSQL_PORT" "SET GLOBAL max_connections = $need"
      MAXCONN_RESTORE=$cur
    fi
  fi
}

wait_port() {  # wait_port PORT SECONDS [PID]: until something listens on HOST:PORT
  local port=$1 secs=$2 pid=${3:-} i
  for ((i = 0; i < secs * 10; i++)); do
    if (exec 3<>"/dev/tcp/$HOST/$port") 2>/dev/null; then return 0; fi
    if [[ -n $pid ]] && ! kill -0 "$pid" 2>/dev/null; then return 2; fi
    sleep 0.1
  done
  return 1
}
port_free() { ! (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }
listener_pid() {  # pid of the process listening on HOST:PORT (via ss)
  ss -Hltnp "sport = :$1" 2>/dev/null | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2
}

# cpu_group_of PID: the group the kernel shares CPU time by for this process: its autogroup (one per session, when
# /proc/sys/kernel/sched_autogroup_enabled is 1) or else its cpu cgroup. Every target must be in a group of its own,
# apart from sysbench's (this script's): a proxy in sysbench's group splits one share with 64 client threads while
# MariaDB and a daemonised HAProxy each get a whole one, which moved QPS and p95 by 10-30% (decision 061).
AUTOGROUP=$(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null || echo 0)
cpu_group_of() {
  if [[ $AUTOGROUP == 1 && -r /proc/$1/autogroup ]]; then
    cut -d' ' -f1 <"/proc/$1/autogroup"
  else
    grep -m1 -E '^[0-9]+:(cpu,cpuacct|cpu|):' "/proc/$1/cgroup" 2>/dev/null | cut -d: -f3
  fi
}
check_cpu_group() {  # check_cpu_group NAME PID: warn when a target shares the harness's CPU group
  local mine theirs
  mine=$(cpu_group_of $$) theirs=$(cpu_group_of "$2")
  if [[ -n $theirs && $theirs == "$mine" ]]; then
    log "WARNING: $1 (pid $2) shares this script's CPU group ($theirs) with sysbench, unlike the other targets; its"
    log "  QPS and latency are not comparable (start it in a session of its own: setsid; decision 061)"
  fi
}

# sched_of PID: the scheduling policies of a process's threads, as names (e.g. "batch", or "batch,normal" when
# they differ), from field 41 of each thread's stat.
sched_of() {
  local t f names=()
  for t in /proc/"$1"/task/*/stat; do
    f=$(sed -e 's/^.*) //' "$t" 2>/dev/null | cut -d' ' -f39) || continue
    case "$f" in 0) names+=(normal) ;; 3) names+=(batch) ;; 5) names+=(idle) ;; '') ;; *) names+=("policy$f") ;; esac
  done
  printf '%s\n' "${names[@]}" | sort -u | paste -sd, -
}

# ---------------------------------------------------------------- HAProxy
start_haproxy() {
  port_free "$HAPROXY_PORT" || die "port $HAPROXY_PORT is already in use (use --haproxy-port)"
  local cfg="$WORK/haproxy.cfg"
  cat >"$cfg" <<EOF
# generated by benchmark/sysbench/run.sh
global
    # each proxied connection takes 2 fds; stay under the open-files limit ($NOFILE)
    maxconn $HAPROXY_MAXCONN
    nbthread $WORKER_THREADS

defaults
    mode tcp
    retries 2
    timeout connect 2s
    timeout client 3600s
    timeout server 3600s

listen mysql
    bind $HOST:$HAPROXY_PORT
    mode tcp
    balance leastconn
    server mariadb $HOST:$MYSQL_PORT
EOF
  haproxy -c -q -f "$cfg" || die "invalid HAProxy config $cfg"
  local sched=()
  [[ $HAPROXY_SCHED == batch ]] && sched=(chrt --batch 0)   # the daemon and its threads inherit it
  "${sched[@]}" haproxy -f "$cfg" -D -p "$HAPROXY_PIDFILE" >"$WORK/haproxy.log" 2>&1 || { cat "$WORK/haproxy.log" >&2; die "HAProxy failed to start"; }
  local i
  for ((i = 0; i < 50; i++)); do [[ -s $HAPROXY_PIDFILE ]] && break; sleep 0.1; done
  HAPROXY_PID=$(head -1 "$HAPROXY_PIDFILE" 2>/dev/null || true)
  [[ -n $HAPROXY_PID ]] || die "HAProxy wrote no pid file"
  wait_port "$HAPROXY_PORT" 10 "$HAPROXY_PID" || die "HAProxy not listening on $HAPROXY_PORT"
  sql "$HAPROXY_PORT" 'SELECT 1' >/dev/null || die "no MySQL answer through HAProxy"
  log "HAProxy $(haproxy -v | head -1 | awk '{print $3}') on $HOST:$HAPROXY_PORT, nbthread $WORKER_THREADS, maxconn $HAPROXY_MAXCONN, pid $HAPROXY_PID, scheduling $(sched_of "$HAPROXY_PID"), CPU group $(cpu_group_of "$HAPROXY_PID")"
  check_cpu_group HAProxy "$HAPROXY_PID"
}

# ---------------------------------------------------------------- Sluice
find_sluice_dist() {
  if [[ -n $SLUICE_DIST ]]; then
    [[ -e $SLUICE_DIST ]] || die "--sluice-dist $SLUICE_DIST does not exist"
    return
  fi
  local c
  for c in "$REPO_ROOT"/distribution/target/sluice-*.tar.gz; do
    [[ -f $c ]] && { SLUICE_DIST=$c; return; }
  done
  die "no Sluice distribution: build it (distribution/target/sluice-*.tar.gz), pass --sluice-dist PATH, or use --targets direct,haproxy"
}

sluice_tls_config() {  # the server.tls section: required TLS with --ssl, none otherwise
  if (( SSL )); then
    printf '  tls:\n    enabled: true\n    requireSecureTransport: true\n    provider: %s\n' "$SSL_PROVIDER"
  else
    printf '  tls:\n    enabled: false\n'
  fi
}

# The admin API: on a free port, unless --capture needs it at --capture-admin, with a token of this run's own
# (captures are started with POST calls, which need one).
sluice_admin_config() {
  if (( CAPTURE )); then
    printf 'admin:\n  address: %s\n  port: %s\n  token: %s\n' "${CAPTURE_ADMIN%:*}" "${CAPTURE_ADMIN##*:}" \
      "$SLUICE_ADMIN_TOKEN"
  else
    printf 'admin:\n  address: %s\n  port: 0\n' "$HOST"
  fi
}

write_sluice_config() {  # write_sluice_config FILE LEG (sluice | sluice_tx)
  local leg=$2 port=$SLUICE_PORT admin
  admin=$(sluice_admin_config)
  if [[ $leg == sluice_tx ]]; then
    port=$SLUICE_TX_PORT
    admin=$(printf 'admin:\n  address: %s\n  port: 0\n' "$HOST")   # --capture's admin port is the sluice leg's
  fi
  cat >"$1" <<EOF
# generated by benchmark/sysbench/run.sh (leg $leg)
databaseName: sbtest
dataSources:
  ds_0:
    url: jdbc:mysql://$HOST:$MYSQL_PORT/sbtest
    username: $MYSQL_USER
    password: $MYSQL_PASSWORD
    maxPoolSize: $(pool_size_of "$leg")
    minPoolSize: 0
    # idle pooled connections close soon after a run, so that they do not count in the next leg's
    # server_conns_max (MariaDB's Threads_connected is server-wide); 0 = kept, Sluice's default is 600000
    idleTimeoutMilliseconds: $POOL_IDLE_MS
rules: []
pooling:
  mode: $(pooling_of "$leg")
# no health checks: each one is a new server connection (every 2 s by default), which would count in
# backend_handshakes (MariaDB's Connections counter); one backend, nothing to fail over to
healthCheck:
  intervalMilliseconds: 0
server:
  # loopback, as everything here: Sluice refuses an open address while a user has an empty password
  address: $HOST
  port: $port
  workerThreads: $WORKER_THREADS
$(sluice_tls_config)
authority:
  users:
    - user: $MYSQL_USER
      password: "$MYSQL_PASSWORD"
$admin
EOF
  # The sluice_tx leg takes its own extra in place of the common one: an A/B of one section (statistics on with a
  # setting vs off) cannot be written as two appended copies of the same top-level key.
  if [[ -n $SLUICE_CONFIG_EXTRA && ! ( $leg == sluice_tx && -n $SLUICE_TX_CONFIG_EXTRA ) ]]; then
    [[ -f $SLUICE_CONFIG_EXTRA ]] || die "--sluice-config-extra $SLUICE_CONFIG_EXTRA: no such file"
    { echo "# appended from $SLUICE_CONFIG_EXTRA (--sluice-config-extra)"; cat "$SLUICE_CONFIG_EXTRA"; } >>"$1"
  fi
  if [[ $leg == sluice_tx && -n $SLUICE_TX_CONFIG_EXTRA ]]; then
    { echo "# appended from $SLUICE_TX_CONFIG_EXTRA (--sluice-tx-config-extra)"; cat "$SLUICE_TX_CONFIG_EXTRA"; } >>"$1"
  fi
}

# start_sluice LEG: unpacks the distribution into its own folder (bin/start.sh keeps its pid file and logs there),
# writes its config and starts it. Sets SLUICE_HOME/SLUICE_PID/SLUICE_LAUNCHER_PID for the sluice leg,
# SLUICE_TX_HOME/SLUICE_TX_PID/SLUICE_TX_LAUNCHER_PID for sluice_tx.
start_sluice() {
  local leg=${1:-sluice} port=$SLUICE_PORT var=SLUICE opt=--sluice-port
  [[ $leg == sluice_tx ]] && { port=$SLUICE_TX_PORT var=SLUICE_TX opt=--sluice-tx-port; }
  find_sluice_dist
  local dist=$SLUICE_DIST
  [[ $leg == sluice_tx && -n $SLUICE_TX_DIST ]] && dist=$SLUICE_TX_DIST
  port_free "$port" || die "port $port is already in use (use $opt)"
  local unpack="$WORK/$leg" home
  mkdir -p "$unpack"
  if [[ -d $dist ]]; then
    cp -a "$dist/." "$unpack/"
  else
    tar -xzf "$dist" -C "$unpack" || die "cannot unpack $dist"
  fi
  local start
  start=$(find "$unpack" -maxdepth 3 -path '*/bin/start.sh' | head -1)
  [[ -n $start ]] || die "no bin/start.sh in $dist"
  home=$(cd "$(dirname "$start")/.." && pwd)
  printf -v "${var}_HOME" '%s' "$home"
  mkdir -p "$home/conf"
  write_sluice_config "$home/conf/config.yaml" "$leg"
  local java_opts=$SLUICE_JAVA_OPTS_EFFECTIVE
  [[ $leg == sluice_tx ]] && (( SLUICE_TX_JAVA_OPTS_SET )) && java_opts=$SLUICE_TX_JAVA_OPTS
  log "starting Sluice ($leg: pooling $(pooling_of "$leg"), maxPoolSize $(pool_size_of "$leg")) from $dist (workerThreads $WORKER_THREADS, port $port, JAVA_OPTS: ${java_opts:-start.sh defaults})"
  # start.sh may daemonize or stay in the foreground: run it in the background either
  # way and find the JVM by its listening socket.
  (
    cd "$home"
    if [[ -n $java_opts ]]; then export JAVA_OPTS="$java_opts"; fi
    sched=$SLUICE_SCHED
    [[ $leg == sluice_tx && -n $SLUICE_TX_SCHED ]] && sched=$SLUICE_TX_SCHED
    if [[ -n $sched ]]; then export SLUICE_CPU_SCHEDULING=$sched; fi
    exec bin/start.sh "$port" "$home/conf"
  ) >"$WORK/$leg-start.log" 2>&1 </dev/null &
  printf -v "${var}_LAUNCHER_PID" '%s' "$!"
  wait_port "$port" 90 || { tail -30 "$WORK/$leg-start.log" >&2; find "$home" -name '*.log' -newer "$start" -exec tail -30 {} \; >&2 2>/dev/null; die "Sluice ($leg) not listening on $port after 90 s"; }
  local pid
  pid=$(listener_pid "$port")
  [[ -n $pid ]] || die "cannot find the pid listening on $port"
  printf -v "${var}_PID" '%s' "$pid"
  local i
  for ((i = 0; i < 30; i++)); do
    sql "$port" 'SELECT 1' >/dev/null 2>&1 && break
    sleep 1
  done
  (( i < 30 )) || die "Sluice ($leg) listens on $port but does not answer SELECT 1"
  # its admin API (port 0 = a free one): the other port the JVM listens on; /metrics gives the leg's own
  # backend connections (proxy_backend_* columns)
  local admin
  admin=$(ss -Hltnp 2>/dev/null | grep "pid=$pid," | awk '{print $4}' | grep -v ":$port\$" | head -1 || true)
  printf -v "${var}_ADMIN" '%s' "$admin"
  log "Sluice ($leg) up on $HOST:$port, pid $pid, admin ${admin:-not found}, scheduling $(sched_of "$pid"), CPU group $(cpu_group_of "$pid")"
  check_cpu_group "Sluice ($leg)" "$pid"
}

stop_sluice() {  # stop_sluice HOME PID LAUNCHER_PID NAME
  local home=$1 pid=$2 launcher=$3 name=$4
  [[ -n $home ]] || return 0
  if [[ -x $home/bin/stop.sh ]]; then
    log "stopping $name (bin/stop.sh)"
    (cd "$home" && timeout 20 bin/stop.sh) >>"$WORK/$name-stop.log" 2>&1
  fi
  stop_pid "$pid" "$name"
  stop_pid "$launcher" "$name launcher"
}

# ---------------------------------------------------------------- measuring
CLK_TCK=$(getconf CLK_TCK)
box_idle_ticks() {  # idle + iowait clock ticks of all CPUs together (first line of /proc/stat)
  awk '/^cpu /{print $5 + $6; exit}' /proc/stat
}

proc_cpu_s() {  # proc_cpu_s PID: CPU seconds (user + system) the live process PID has used so far
  awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f\n", ($12 + $13) / hz }' "/proc/$1/stat" 2>/dev/null || echo 0
}
children_cpu_s() {  # children_cpu_s FILE: CPU seconds (user + system) of this shell's reaped children, into FILE
  # `times` must run in this shell itself: in a pipeline or $(...) it would report a fresh fork's (empty) children
  times >"$1"
  tail -1 "$1" | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] } printf "%.2f\n", s }' >"$1.s"
  mv "$1.s" "$1"
}

cpu_ticks() {  # utime+stime of a pid in clock ticks (fields 14,15 of /proc/PID/stat)
  local s
  s=$(cat "/proc/$1/stat" 2>/dev/null) || { echo ""; return; }
  s=${s##*) }   # drop "pid (comm) " — comm may contain spaces
  awk '{print $12 + $13}' <<<"$s"
}
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || true; }
port_of()  { case "$1" in direct) echo "$MYSQL_PORT" ;; haproxy) echo "$HAPROXY_PORT" ;; sluice|sluice_capture) echo "$SLUICE_PORT" ;; sluice_tx) echo "$SLUICE_TX_PORT" ;; esac; }
proxy_pid() { case "$1" in haproxy) echo "$HAPROXY_PID" ;; sluice|sluice_capture) echo "$SLUICE_PID" ;; sluice_tx) echo "$SLUICE_TX_PID" ;; *) echo "" ;; esac; }
DB_PID=""
find_db_pid() {
  local f
  f=$(sql "$MYSQL_PORT" 'SELECT @@pid_file' 2>/dev/null || true)
  [[ -n $f && -r $f ]] && DB_PID=$(head -1 "$f")
  [[ -n $DB_PID ]] || DB_PID=$(pgrep -xo mariadbd || pgrep -xo mysqld || true)
  [[ -n $DB_PID ]] && check_cpu_group MariaDB "$DB_PID"
  return 0
}

# ---------------------------------------------------------------- side loads (c, d)
PY=/usr/bin/python3
[[ -x $PY ]] || PY=$(command -v python3)
db_status() {  # db_status NAME -> value of SHOW GLOBAL STATUS NAME on MariaDB itself
  sql "$MYSQL_PORT" "SHOW GLOBAL STATUS LIKE '$1'" 2>/dev/null | awk '{print $2}'
}
nofile_of() {  # soft "Max open files" of a pid
  awk '/^Max open files/ {print $4}' "/proc/$1/limits" 2>/dev/null
}
fds_of() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }

# Why TARGET cannot hold N idle connections on this machine (empty = it can). Each
# check is an fd or connection budget; a point that does not fit is skipped for that
# target and listed in skipped.csv, instead of failing the run halfway.
idle_skip_reason() {
  local target=$1 n=$2 lim fds maxc
  (( n == 0 )) && return 0
  if (( n + 100 > NOFILE )); then
    echo "idle client: open-files limit $NOFILE < $n connections + 100"; return 0
  fi
  # every idle client is a server connection through direct and HAProxy, and through a SESSION-mode Sluice
  # when the clients name a schema (--idle-db)
  if [[ $target == direct || $target == haproxy ]] \
     || { [[ $(pooling_of "$target") == session && $IDLE_DB != none ]]; }; then
    maxc=$(sql "$MYSQL_PORT" 'SELECT @@GLOBAL.max_connections' 2>/dev/null || echo 0)
    if (( n + MAX_THREADS + 20 > maxc )); then
      echo "MariaDB max_connections $maxc < $n idle + $MAX_THREADS threads + 20"; return 0
    fi
    if [[ -n $DB_PID ]]; then
      lim=$(nofile_of "$DB_PID"); fds=$(fds_of "$DB_PID")
      if [[ -n $lim && $lim != unlimited ]] && (( fds + n + MAX_THREADS + 300 > lim )); then
        echo "MariaDB open-files limit $lim (mariadbd has $fds fds open; needs $n + $MAX_THREADS + 300 more)"; return 0
      fi
    fi
  fi
  if [[ $target == haproxy ]] && (( n + MAX_THREADS + 20 > HAPROXY_MAXCONN )); then
    echo "HAProxy maxconn $HAPROXY_MAXCONN: 2 fds per proxied connection under the open-files limit $NOFILE"; return 0
  fi
  local spid
  spid=$(proxy_pid "$target")
  if [[ $target == sluice* && -n $spid ]]; then
    lim=$(nofile_of "$spid"); fds=$(fds_of "$spid")
    # a SESSION leg with schema-naming clients also holds one backend socket per client
    local per=1
    [[ $(pooling_of "$target") == session && $IDLE_DB != none ]] && per=2
    if [[ -n $lim && $lim != unlimited ]] && (( fds + per * (n + MAX_THREADS) + 400 > lim )); then
      echo "Sluice ($target) open-files limit $lim (JVM has $fds fds open; needs $per x ($n + $MAX_THREADS) + 400 more)"; return 0
    fi
  fi
  return 0
}

# Contract: sideload_start WORKLOAD TARGET PORT LOGFILE starts the side load of a c/d
# workload (nothing for others) and returns once it is in place (idle: all logins done);
# non-zero = it could not be set up. sideload_stop [now] ends it and fills SIDE_COLS,
# the side-load columns of the CSV row.
SIDE_KIND=""
SIDE_N=""
SIDE_LOG=""
SIDE_CONN0=""
SIDE_NEWC=""
SIDE_THREADS0=""
SIDE_COLS=",,,,,,,,"   # side_load..db_new_conns (9 columns)
SIDE_HEADER="side_load,side_n,side_ok,side_failed,side_dropped,side_p50_ms,side_p95_ms,side_rate,db_new_conns"
SIDE_FAILED=0          # runs whose side load had failed or dropped connections

# ---------------------------------------------------------------- server connections (issue #8)
# Per run, MariaDB's SHOW GLOBAL STATUS is sampled about once a second through ONE persistent mariadb client that
# reads its queries from a fifo, so the sampler adds exactly one connection to Threads_connected and none to the
# Connections counter after its first sample:
#   server_conns_start = Threads_connected at the first sample - 1 (the sampler)
#   server_conns_max   = max Threads_connected over the samples - 1
#   backend_handshakes = Connections at the last sample - at the first, minus this script's own status queries
#                        to MariaDB in between (sql() counts them in SQL_COUNT_FILE)
# The window runs from before the side load (idle logins, churn) to the end of sysbench. Both counters are
# server-wide: other clients of the MariaDB server count too (server_conns_start shows what was there).
DBSTAT_QUERY="SHOW GLOBAL STATUS WHERE Variable_name IN ('Threads_connected', 'Connections');"
DBSTAT_OUT=""
DBSTAT_MARK0=0
DB_COLS=",,"           # server_conns_start,server_conns_max,backend_handshakes
DB_THREADS_BASE=""     # Threads_connected of other clients, before any proxy started
sql_calls() { [[ -f $SQL_COUNT_FILE ]] && wc -l <"$SQL_COUNT_FILE" || echo 0; }

# A Sluice leg's own view, exact and unaffected by other clients of MariaDB: its admin API's pool counters
# (GET /api/backends), sampled every PROXY_SAMPLE_S seconds alongside.
#   proxy_backend_conns_max = max of the pools' "open" (backend connections open now: active or idle)
#   proxy_backend_opened    = delta of the pools' "created" (backend connections that logged in; the same
#                             counter as /metrics' sluice_backend_connections_opened)
# Not /metrics: a Prometheus scrape cost Sluice about 6 ms of CPU (27 ms while its code was still being compiled)
# and 1.2 MiB of garbage, and at one scrape a second that was charged to the proxy CPU per query of every Sluice
# run, and its garbage grew the RSS that workload b checks. /api/backends costs about a third of that.
PROXY_SAMPLE_S=2
admin_of() { case "$1" in sluice|sluice_capture) echo "$SLUICE_ADMIN" ;; sluice_tx) echo "$SLUICE_TX_ADMIN" ;; *) echo "" ;; esac; }
# Read with bash alone (/dev/tcp, a regex), not curl | grep | awk: those were three processes started every
# PROXY_SAMPLE_S seconds during Sluice runs only, a side load HAProxy's runs did not get. (Polling itself did not
# move Sluice's p95 in hand A/B rounds; the excess then blamed on it was the CPU grouping: decision 061.)
metrics_read() {  # metrics_read HOST:PORT -> "open opened" (blank when the admin API does not answer)
  local host=${1%:*} port=${1##*:} response="" line c=0 o=0 seen=0 rest
  host=${host#[}; host=${host%]}; host=${host#::ffff:}
  { exec 7<>"/dev/tcp/$host/$port"; } 2>/dev/null || return 0
  printf 'GET /api/backends HTTP/1.0\r\nHost: %s\r\nConnection: close\r\n\r\n' "$host" >&7
  while IFS= read -r -t 2 line <&7 || [[ -n $line ]]; do response+=$line; done
  exec 7<&-
  rest=$response
  while [[ $rest =~ \"(open|created)\":([0-9]+) ]]; do
    if [[ ${BASH_REMATCH[1]} == open ]]; then c=$((c + BASH_REMATCH[2])); else o=$((o + BASH_REMATCH[2])); fi
    seen=1
    rest=${rest#*"${BASH_REMATCH[0]}"}
  done
  (( seen )) && printf '%d %d\n' "$c" "$o"
  return 0
}
PROXY_COLS=","        # proxy_backend_conns_max,proxy_backend_opened

db_sampler_start() {  # db_sampler_start TARGET
  local fifo="$WORK/dbstat.fifo" i maddr
  maddr=$(admin_of "${1:-}")
  rm -f "$WORK/metrics.txt"
  if [[ -n $maddr ]]; then
    metrics_read "$maddr" >"$WORK/metrics.txt"
    ( while :; do metrics_read "$maddr" >>"$WORK/metrics.txt"; sleep "$PROXY_SAMPLE_S"; done ) &
    METRICS_PID=$!
  fi
  DBSTAT_OUT="$WORK/dbstat.txt"
  rm -f "$fifo" "$DBSTAT_OUT"
  : >"$DBSTAT_OUT"
  mkfifo "$fifo" || { log "  mkfifo failed: no server connection samples for this run"; return 0; }
  ( MYSQL_PWD="$MYSQL_PASSWORD" exec "$MYSQL_BIN" -h "$HOST" -P "$MYSQL_PORT" -u "$MYSQL_USER" --protocol=TCP \
      --connect-timeout=5 -N -B -n <"$fifo" >"$DBSTAT_OUT" 2>"$WORK/dbstat.err" ) &
  DBSTAT_CLIENT_PID=$!
  # The ticker is the fifo's only writer (so the client sees EOF when it ends; sleep does not inherit the fifo).
  # On TERM it sends a last query: the sample at the end of the run.
  (
    exec 3>"$fifo"
    trap 'echo "$DBSTAT_QUERY" >&3 2>/dev/null; exit 0' TERM
    while :; do
      echo "$DBSTAT_QUERY" >&3 2>/dev/null || exit 0
      sleep 1 3>&- &
      wait $! || true
    done
  ) &
  DBSTAT_TICKER_PID=$!
  for ((i = 0; i < 100; i++)); do   # the first sample is the start of the window
    grep -q '^Threads_connected' "$DBSTAT_OUT" 2>/dev/null && break
    kill -0 "$DBSTAT_CLIENT_PID" 2>/dev/null || break
    sleep 0.05
  done
  DBSTAT_MARK0=$(sql_calls)
}

db_sampler_stop() {  # fills DB_COLS and PROXY_COLS
  DB_COLS=",," PROXY_COLS=","
  if [[ -n $METRICS_PID ]]; then
    kill "$METRICS_PID" 2>/dev/null || true
    wait "$METRICS_PID" 2>/dev/null || true
    METRICS_PID=""
    local maddr
    maddr=$(admin_of "${1:-}")
    [[ -n $maddr ]] && metrics_read "$maddr" >>"$WORK/metrics.txt"
    PROXY_COLS=$(awk 'NF == 2 { if (o0 == "") o0 = $2; o1 = $2; if (m == "" || $1 + 0 > m + 0) m = $1 }
      END { if (o0 == "") print ","; else printf "%d,%d\n", m, o1 - o0 }' "$WORK/metrics.txt" 2>/dev/null) || PROXY_COLS=","
  fi
  [[ -n $DBSTAT_CLIENT_PID ]] || return 0
  local i mark1
  if [[ -n $DBSTAT_TICKER_PID ]]; then
    kill -TERM "$DBSTAT_TICKER_PID" 2>/dev/null || true
    wait "$DBSTAT_TICKER_PID" 2>/dev/null || true
    DBSTAT_TICKER_PID=""
  fi
  mark1=$(sql_calls)
  for ((i = 0; i < 100; i++)); do kill -0 "$DBSTAT_CLIENT_PID" 2>/dev/null || break; sleep 0.1; done
  stop_pid "$DBSTAT_CLIENT_PID" "status sampler" 2
  wait "$DBSTAT_CLIENT_PID" 2>/dev/null || true
  DBSTAT_CLIENT_PID=""
  [[ -s $WORK/dbstat.err ]] && log "  status sampler: $(head -2 "$WORK/dbstat.err" | tr '\n' ' ')"
  DB_COLS=$(awk -v own=$(( mark1 - DBSTAT_MARK0 )) '
    $1 == "Connections"       { if (c0 == "") c0 = $2; c1 = $2 }
    $1 == "Threads_connected" { if (t0 == "") t0 = $2; if (tmax == "" || $2 + 0 > tmax + 0) tmax = $2 }
    END {
      if (t0 == "") { print ",,"; exit }
      printf "%d,%d,%s\n", t0 - 1, tmax - 1, (c0 == "" ? "" : c1 - c0 - own)
    }' "$DBSTAT_OUT" 2>/dev/null) || DB_COLS=",,"
  rm -f "$WORK/dbstat.fifo"
}

# Before a run: wait (bounded) until the previous legs' idle pooled connections have been closed
# (idleTimeoutMilliseconds, checked by Sluice about every second), so that they are not counted in this run.
# With a long idle timeout (over 5 s, e.g. a churn run that keeps its pools warm between rounds) there is no wait:
# the pools stay open on purpose.
db_settle() {
  (( POOL_IDLE_MS > 0 && POOL_IDLE_MS <= 5000 )) && [[ -n $DB_THREADS_BASE ]] || return 0
  has_sluice || has_sluice_tx || return 0
  local deadline=$(( SECONDS + POOL_IDLE_MS * 3 / 2000 + 4 )) tc
  while (( SECONDS < deadline )); do
    tc=$(db_status Threads_connected)
    [[ -z $tc ]] && return 0
    (( tc - 1 <= DB_THREADS_BASE + 2 )) && return 0
    sleep 0.5
  done
  log "  MariaDB still has $(( tc - 1 )) client connections (${DB_THREADS_BASE} before the proxies started): measuring anyway"
}

sideload_start() {
  local w=$1 target=$2 port=$3 logf=$4 i
  SIDE_KIND="" SIDE_N="" SIDE_LOG=$logf SIDE_CONN0="" SIDE_NEWC="" SIDE_COLS=",,,,,,,," SIDE_CPU="" SIDE_SECS=""
  case "$w" in
    idle_*) SIDE_KIND=idle SIDE_N=${w#idle_} ;;
    churn_*) SIDE_KIND=churn SIDE_N=${w#churn_} ;;
    *) return 0 ;;
  esac
  : >"$logf"
  if [[ $SIDE_KIND == idle ]]; then
    (( SIDE_N > 0 )) || return 0
    SIDE_THREADS0=$(db_status Threads_connected)
    SIDE_CONN0=$(db_status Connections)
    local ready_s=$(( 60 + SIDE_N / 50 ))
    # hold bound: opening + this run + slack; normally stopped by sideload_stop
    local -a dbarg=()
    [[ $IDLE_DB != none ]] && dbarg=(--db "$IDLE_DB")
    if [[ $IDLE_CLIENT == jdbc ]]; then
      java -Xmx1g -cp "$REPO_ROOT/benchmark/target/benchmarks.jar" io.sluice.benchmark.IdleJdbcClients \
        --host "$HOST" --port "$port" --user "$MYSQL_USER" --password "$MYSQL_PASSWORD" --count "$SIDE_N" \
        --concurrency "$(( IDLE_CONCURRENCY < 50 ? IDLE_CONCURRENCY : 50 ))" "${dbarg[@]}" \
        --hold-seconds $(( ready_s + TIME + 120 )) >"$logf" 2>&1 </dev/null &
    else
      "$PY" "$SCRIPT_DIR/idle_clients.py" --host "$HOST" --port "$port" --user "$MYSQL_USER" \
        --password "$MYSQL_PASSWORD" --count "$SIDE_N" --concurrency "$IDLE_CONCURRENCY" "${dbarg[@]}" \
        --hold-seconds $(( ready_s + TIME + 120 )) >"$logf" 2>&1 </dev/null &
    fi
    SIDELOAD_PID=$!
    for ((i = 0; i < ready_s * 10; i++)); do
      grep -q '^READY' "$logf" && break
      kill -0 "$SIDELOAD_PID" 2>/dev/null || break
      sleep 0.1
    done
    if ! grep -q '^READY' "$logf"; then
      log "idle client for $target did not finish its $SIDE_N logins within ${ready_s}s: $(tail -3 "$logf" | tr '\n' ' ')"
      sideload_stop now
      return 1
    fi
    local connected
    connected=$(sed -n 's/^READY connected=\([0-9]*\).*/\1/p' "$logf")
    # server connections the target created for the idle logins (the query counts 1)
    SIDE_NEWC=$(db_status Connections)
    [[ -n $SIDE_NEWC && -n $SIDE_CONN0 ]] && SIDE_NEWC=$(( SIDE_NEWC - SIDE_CONN0 - 1 )) || SIDE_NEWC=""
    log "  $SIDE_N idle connections to $target: $(grep '^READY' "$logf" | cut -d' ' -f2-); new server connections: $SIDE_NEWC"
    (( ${connected:-0} > 0 )) || { sideload_stop now; return 1; }
    sleep "$IDLE_SETTLE"   # let the proxy and the idle client settle (JIT, GC) before sysbench starts
    SIDE_IDLE_CPU0=$(proc_cpu_s "$SIDELOAD_PID")
    return 0
  fi
  # churn (also for rate 0: the window measures the baseline's new server connections)
  local blocks secs=$(( TIME - 2 ))
  blocks=$(churn_blocks_of "$w")
  (( blocks > 0 )) && secs=$(( 5 * blocks ))
  SIDE_SECS=$secs   # the seconds the churn runs, for sideload_stop's achieved rate
  (
    sleep 1   # sysbench has connected by now: its connections are not in the window
    (( CHURN_WARMUP > 0 )) || db_status Connections >"$WORK/side_conn0"
    if (( SIDE_N > 0 )); then
      # sysbench's own client (libmariadb) logs in exactly as the measured connections do, at a third of a
      # Python handshake's CPU; 16 threads bound the connections in flight (arrivals queue behind them).
      # With --churn-blocks it churns for 5 s from 3 s after its own start (4 s after sysbench's), every 10 s
      # (see churn_blocks_qps).
      local -a span=(--time="$secs")
      (( blocks > 0 )) && span=(--blocks="$blocks" --time=$(( 10 * blocks - 2 )))
      children_cpu_s "$WORK/side_cpu0"   # the status queries' mysql clients are children too; only sysbench counts
      churn_client "$port" --rate="$SIDE_N" "${span[@]}" &
      echo $! >"$WORK/side_churn.pid"
      if (( CHURN_WARMUP > 0 )); then
        sleep "$CHURN_WARMUP"   # the window opens once the churn has run this long
        db_status Connections >"$WORK/side_conn0"
      fi
      wait "$(cat "$WORK/side_churn.pid")" || true
      children_cpu_s "$WORK/side_cpu1"
      awk -v a="$(cat "$WORK/side_cpu0")" -v b="$(cat "$WORK/side_cpu1")" 'BEGIN{printf "%.2f\n", b - a}' >"$WORK/side_cpu"
      rm -f "$WORK/side_cpu0" "$WORK/side_cpu1"
    else
      sleep "$CHURN_WARMUP"
      (( CHURN_WARMUP > 0 )) && db_status Connections >"$WORK/side_conn0"
      sleep "$(( secs - CHURN_WARMUP ))"
    fi
    db_status Connections >"$WORK/side_conn1"
  ) >"$logf" 2>&1 &
  SIDELOAD_PID=$!
  return 0
}

sideload_stop() {
  local now=${1:-} i py
  if [[ -n $SIDELOAD_PID ]]; then
    if [[ $SIDE_KIND == churn && $now != now ]]; then
      # it ends by itself 1 s before sysbench; in-flight connections time out after 10 s
      for ((i = 0; i < 300; i++)); do kill -0 "$SIDELOAD_PID" 2>/dev/null || break; sleep 0.1; done
    fi
    py=$(cat "$WORK/side_churn.pid" 2>/dev/null || true)
    [[ -n $py ]] && stop_pid "$py" "churn client" 15
    rm -f "$WORK/side_churn.pid"
    if [[ $SIDE_KIND == idle && -n ${SIDE_IDLE_CPU0:-} ]]; then
      # an idle client must be idle while sysbench runs: say what it spent, so a ratio can be judged
      log "  idle client CPU while sysbench ran: $(awk -v a="$SIDE_IDLE_CPU0" -v b="$(proc_cpu_s "$SIDELOAD_PID")" 'BEGIN{printf "%.2f", b - a}') s"
      SIDE_IDLE_CPU0=""
    fi
    # the idle client sends COM_QUIT on up to 15k connections on TERM
    stop_pid "$SIDELOAD_PID" "side load" 60
    wait "$SIDELOAD_PID" 2>/dev/null || true
    SIDELOAD_PID=""
  fi
  [[ -n $SIDE_LOG && -f $SIDE_LOG && ! -s $SIDE_LOG ]] && rm -f "$SIDE_LOG"   # 0 points log nothing
  [[ $now == now ]] && return 0
  [[ -n $SIDE_KIND ]] || return 0
  local json="" c0="" c1="" newc=""
  [[ -f $SIDE_LOG ]] && json=$(sed -n 's/^JSON //p' "$SIDE_LOG" | tail -1)
  if [[ $SIDE_KIND == idle ]]; then
    if (( SIDE_N == 0 )); then
      SIDE_COLS="idle,0,0,0,0,,,,"
      return 0
    fi
    newc=$SIDE_NEWC
    # wait (bounded) until MariaDB has let go of the closed connections, so the next
    # run does not start with thousands of threads still exiting
    local tc
    for ((i = 0; i < 300; i++)); do
      tc=$(db_status Threads_connected)
      [[ -z $tc ]] || (( tc <= ${SIDE_THREADS0:-0} + 20 )) && break
      sleep 0.1
    done
  else
    c0=$(cat "$WORK/side_conn0" 2>/dev/null || true)
    c1=$(cat "$WORK/side_conn1" 2>/dev/null || true)
    SIDE_CPU=$(cat "$WORK/side_cpu" 2>/dev/null || true)
    rm -f "$WORK/side_conn0" "$WORK/side_conn1" "$WORK/side_cpu"
    # new server connections in the churn window; the second status query counts 1
    [[ -n $c0 && -n $c1 ]] && newc=$(( c1 - c0 - 1 ))
  fi
  SIDE_COLS=$("$PY" - "$SIDE_KIND" "$SIDE_N" "$json" "$newc" "$SIDE_LOG" "${SIDE_SECS:-$(( TIME - 2 ))}" <<'PYEOF'
import json, re, sys
kind, n, js, new, logf, secs = sys.argv[1:7]
d = json.loads(js) if js else {}
if kind == "churn" and not d:
    # churn.lua: per worker thread "CHURN ok=N failed=M", "CHURNLAT us,..." and "CHURNERR count message";
    # sysbench prints each failed login's server error as "FATAL: error CODE: message"
    ok = failed = 0
    lat, errors = [], {}
    try:
        lines = open(logf, errors="replace").read().splitlines()
    except OSError:
        lines = []
    for m in re.finditer(r"CHURN ok=(\d+) failed=(\d+)", "\n".join(lines)):
        ok += int(m.group(1)); failed += int(m.group(2))
    for line in lines:
        if line.startswith("CHURNLAT "):
            lat += [int(v) for v in line[9:].split(",") if v]
        else:
            m = re.match(r"FATAL: error (\d+): (.*)", line)
            if m:
                key = m.group(1) + ": " + m.group(2)[:60]
                errors[key] = errors.get(key, 0) + 1
    if any("CHURN ok=" in l for l in lines):
        lat.sort()
        pct = lambda p: round(lat[min(len(lat) - 1, int(p * len(lat)))] / 1000, 3) if lat else None
        d = {"succeeded": ok, "failed": failed, "p50_ms": pct(0.50), "p95_ms": pct(0.95),
             "achieved_per_s": round(ok / float(secs), 1) if float(secs) > 0 else None, "errors": errors}
        print("JSON " + json.dumps(d), file=open(logf, "a"))
def f(v): return "" if v is None else str(v)
if kind == "idle":
    ok, failed, dropped = d.get("connected"), d.get("failed"), d.get("dropped")
    p50, p95 = d.get("open_p50_ms"), d.get("open_p95_ms")
    rate = round(d["connected"] / d["open_s"], 1) if d.get("open_s") else None
else:
    ok, failed, dropped = (d.get("succeeded"), d.get("failed"), "") if d else (0 if n == "0" else None, 0 if n == "0" else None, "")
    p50, p95, rate = d.get("p50_ms"), d.get("p95_ms"), d.get("achieved_per_s")
print(",".join([kind, n, f(ok), f(failed), f(dropped), f(p50), f(p95), f(rate), f(new)]))
PYEOF
  ) || SIDE_COLS="$SIDE_KIND,$SIDE_N,,,,,,,"
  IFS=, read -r _ _ _ f d _ <<<"$SIDE_COLS"
  if [[ -z $f ]] || (( ${f:-0} > 0 || ${d:-0} > 0 )); then SIDE_FAILED=$((SIDE_FAILED + 1)); fi
}

CSV="$OUT/results.csv"
CSV_HEADER="workload,test,threads,repeat,target,time_s,exit_code,queries,qps,tps,avg_ms,p95_ms,errors,reconnects,proxy_cpu_s,proxy_cpu_s_per_kq,proxy_rss_kb,proxy_rss_max_kb,db_cpu_s_per_kq,loadavg1,started_utc,log,$SIDE_HEADER,db_rss_kb,pooling,max_pool_size,server_conns_start,server_conns_max,backend_handshakes,proxy_backend_conns_max,proxy_backend_opened,side_cpu_s,box_idle_s,qps_churn_on,qps_churn_off"
SKIPPED="$OUT/skipped.csv"   # workload,target,reason: points a target cannot reach here

# --churn-blocks: the churn is on over about [4 + 10b, 9 + 10b] s of the run for block b (within a tenth of a
# second: both sysbench processes start their clocks after their own start-up). sysbench's report at second s
# covers (s - 1, s]; the on seconds are 4 + 10b + 2..5 and the off seconds 4 + 10b + 7..9, so that the seconds
# around a switch count for neither.
churn_blocks_qps() {  # churn_blocks_qps LOG BLOCKS -> "QPS_ON,QPS_OFF" (blank when the reports are missing)
  awk -v nb="$2" '
    match($0, /^\[ *[0-9]+s \]/) {
      s = substr($0, 2, RLENGTH - 2) + 0
      if (match($0, /qps: [0-9.]+/)) q[s] = substr($0, RSTART + 5, RLENGTH - 5) + 0
    }
    END {
      for (b = 0; b < nb; b++) {
        s0 = 4 + 10 * b
        for (s = s0 + 2; s <= s0 + 5; s++) if (s in q) { on += q[s]; non++ }
        for (s = s0 + 7; s <= s0 + 9; s++) if (s in q) { off += q[s]; noff++ }
      }
      if (non && noff) printf "%.2f,%.2f\n", on / non, off / noff; else print ","
    }' "$1"
}

parse_sysbench() {  # parse_sysbench LOG -> "queries qps tps avg p95 errors reconnects" (blank = missing)
  awk '
    /^ +transactions:/  { tps = $3; gsub(/[(]/, "", tps) }
    /^ +queries:/       { q = $2; qps = $3; gsub(/[(]/, "", qps) }
    /^ +ignored errors:/{ err = $3 }
    /^ +reconnects:/    { rec = $2 }
    /^Latency/          { lat = 1 }
    lat && /^ +avg:/    { avg = $2 }
    lat && /^ +95th percentile:/ { p95 = $3 }
    END { printf "%s,%s,%s,%s,%s,%s,%s\n", q, qps, tps, avg, p95, err, rec }
  ' "$1"
}

# Traffic capture around one measured run of sluice_capture (issue #7), through the admin API.
capture_start() {  # capture_start NAME
  local dir="$WORK/capture/$1"
  rm -rf "$dir"
  mkdir -p "$WORK/capture"
  "$SLUICE_HOME/bin/sluice-ctl" traffic capture start --admin "$CAPTURE_ADMIN" --output "$dir" \
    --duration "$((TIME + 120))s" --compress "$CAPTURE_COMPRESS" >"$OUT/logs/$1.capture-start.json" 2>&1 \
    || die "cannot start a capture through $CAPTURE_ADMIN (see logs/$1.capture-start.json; --capture needs Sluice's admin API)"
}
capture_stop() {  # capture_stop NAME: the final status (records, dropped, bytes) goes to logs/NAME.capture.json
  "$SLUICE_HOME/bin/sluice-ctl" traffic capture stop --admin "$CAPTURE_ADMIN" >"$OUT/logs/$1.capture.json" 2>&1 \
    || log "  capture stop failed: see logs/$1.capture.json"
  rm -rf "$WORK/capture/$1"   # the files are not kept: only their size and the drop count matter here
}

# sysbench 1.0's --mysql-ssl=on always loads client-key.pem, client-cert.pem and cacert.pem from its working
# directory: a directory with a throw-away client pair and Sluice's generated CA (Sluice asks for no client
# certificate; the files only have to exist and match).
sysbench_ssl_dir() {
  local dir="$WORK/sysbench-ssl"
  if [[ ! -f $dir/client-cert.pem ]]; then
    mkdir -p "$dir"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$dir/client-key.pem" -out "$dir/client-cert.pem" \
      -subj /CN=sysbench -days 2 >/dev/null 2>&1 || die "openssl could not make sysbench's client certificate"
    if [[ -f $SLUICE_HOME/conf/ca.pem ]]; then
      cp "$SLUICE_HOME/conf/ca.pem" "$dir/cacert.pem"
    else
      cp "$dir/client-cert.pem" "$dir/cacert.pem"
    fi
  fi
  echo "$dir"
}

# The churn client of workload d: sysbench's own client (libmariadb), 16 threads, logging in to sbtest.
churn_client() {  # churn_client PORT CHURN_LUA_ARGS... (--rate, --time, --blocks); run it with & only:
  local port=$1; shift   # it execs, so that $! is sysbench's own pid, which the callers wait for and stop
  exec sysbench "$SCRIPT_DIR/churn.lua" --mysql-host="$HOST" --mysql-port="$port" --mysql-user="$MYSQL_USER" \
    --mysql-password="$MYSQL_PASSWORD" --mysql-db=sbtest --threads=16 "$@" run </dev/null
}

run_sysbench() {  # run_sysbench WORKLOAD THREADS TARGET SECONDS LOGFILE [REPORT_INTERVAL] -> exit code
  local w=$1 th=$2 target=$3 secs=$4 logf=$5 interval=${6:-$REPORT_INTERVAL} rc=0
  local -a extra
  read -r -a extra <<<"$(wl_args "$w")"
  sb_conn "$(port_of "$target")"
  local sbdir=$PWD
  if (( SSL )) && [[ $target == sluice || $target == sluice_tx ]]; then
    extra+=(--mysql-ssl=on)
    sbdir=$(sysbench_ssl_dir)
  fi
  (cd "$sbdir" && exec sysbench "$(wl_test "$w")" "${SB_CONN[@]}" --threads="$th" --time="$secs" \
    --rand-type=uniform --db-ps-mode="$PS_MODE" --report-interval="$interval" "${extra[@]}" run) >"$logf" 2>&1 &
  SYSBENCH_PID=$!
  wait "$SYSBENCH_PID" || rc=$?
  SYSBENCH_PID=""
  return "$rc"
}

measure() {  # measure WORKLOAD THREADS REPEAT TARGET
  local w=$1 th=$2 rep=$3 target=$4
  local pid logrel logf rc=0 c0="" c1="" d0="" d1="" rss="" rssmax="" started load
  pid=$(proxy_pid "$target")
  logrel="logs/${w}_t${th}_r${rep}_${target}.log"
  logf="$OUT/$logrel"
  load=$(cut -d' ' -f1 /proc/loadavg)
  started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  [[ -n $pid ]] && { kill -0 "$pid" 2>/dev/null || die "$target (pid $pid) is no longer running"; }
  if [[ $w == idle_* ]]; then
    local why
    why=$(idle_skip_reason "$target" "${w#idle_}")
    if [[ -n $why ]]; then
      if ! grep -q "^$w,$target," "$SKIPPED" 2>/dev/null; then
        [[ -f $SKIPPED ]] || echo "workload,target,reason" >"$SKIPPED"
        echo "$w,$target,\"$why\"" >>"$SKIPPED"
        log "  skipping $w for $target: $why (a limit of this setup; listed in skipped.csv)"
      fi
      return 0
    fi
  fi
  db_settle
  db_sampler_start "$target"
  if ! sideload_start "$w" "$target" "$(port_of "$target")" "$OUT/logs/${w}_t${th}_r${rep}_${target}.side.log"; then
    db_sampler_stop "$target"
    [[ -f $SKIPPED ]] || echo "workload,target,reason" >"$SKIPPED"
    echo "$w,$target,\"repeat $rep: side load could not be set up (see logs/${w}_t${th}_r${rep}_${target}.side.log)\"" >>"$SKIPPED"
    SIDE_FAILED=$((SIDE_FAILED + 1))
    return 0
  fi
  # RSS sampler: last value while sysbench still runs, and the max.
  local rssfile="$WORK/rss.txt"
  : >"$rssfile"
  if [[ -n $pid ]]; then
    ( while kill -0 "$pid" 2>/dev/null; do rss_kb "$pid" >>"$rssfile"; sleep 1; done ) &
    SAMPLER_PID=$!
    c0=$(cpu_ticks "$pid")
  fi
  [[ -n $DB_PID ]] && d0=$(cpu_ticks "$DB_PID")
  [[ $target == sluice_capture ]] && capture_start "${w}_t${th}_r${rep}"
  local idle0 idle1 box_idle
  idle0=$(box_idle_ticks)
  local secs=$TIME interval=$REPORT_INTERVAL blocks
  blocks=$(churn_blocks_of "$w")
  (( blocks > 0 )) && secs=$(( 4 + 10 * blocks )) interval=1
  run_sysbench "$w" "$th" "$target" "$secs" "$logf" "$interval" || rc=$?
  idle1=$(box_idle_ticks)
  # CPU seconds no process used while sysbench ran, all cores together: near 0 = the cores were saturated, and
  # any CPU a side load or the proxy takes comes out of the measured QPS
  box_idle=$(awk -v a="$idle0" -v b="$idle1" -v hz="$CLK_TCK" 'BEGIN{printf "%.2f", (b-a)/hz}')
  [[ $target == sluice_capture ]] && capture_stop "${w}_t${th}_r${rep}"
  [[ -n $DB_PID ]] && d1=$(cpu_ticks "$DB_PID")
  local db_rss=""
  [[ -n $DB_PID ]] && db_rss=$(rss_kb "$DB_PID")
  if [[ -n $pid ]]; then
    c1=$(cpu_ticks "$pid")
    rss_kb "$pid" >>"$rssfile"
    kill "$SAMPLER_PID" 2>/dev/null || true; wait "$SAMPLER_PID" 2>/dev/null || true; SAMPLER_PID=""
    rss=$(grep -v '^$' "$rssfile" | tail -1 || true)
    rssmax=$(sort -n "$rssfile" | tail -1 || true)
  fi
  db_sampler_stop "$target"   # before sideload_stop: closing the idle clients is not part of the run
  sideload_stop
  local parsed q on_off=","
  parsed=$(parse_sysbench "$logf")
  (( blocks > 0 )) && on_off=$(churn_blocks_qps "$logf" "$blocks")
  q=$(cut -d, -f1 <<<"$parsed")
  local cpu_s="" cpu_kq="" db_kq=""
  if [[ -n $c0 && -n $c1 ]]; then
    cpu_s=$(awk -v a="$c0" -v b="$c1" -v hz="$CLK_TCK" 'BEGIN{printf "%.2f", (b-a)/hz}')
    [[ -n $q && $q != 0 ]] && cpu_kq=$(awk -v a="$c0" -v b="$c1" -v hz="$CLK_TCK" -v q="$q" 'BEGIN{printf "%.5f", (b-a)/hz/q*1000}')
  fi
  if [[ -n $d0 && -n $d1 && -n $q && $q != 0 ]]; then
    db_kq=$(awk -v a="$d0" -v b="$d1" -v hz="$CLK_TCK" -v q="$q" 'BEGIN{printf "%.5f", (b-a)/hz/q*1000}')
  fi
  echo "$w,$(wl_test "$w"),$th,$rep,$target,$secs,$rc,$parsed,$cpu_s,$cpu_kq,$rss,$rssmax,$db_kq,$load,$started,$logrel,$SIDE_COLS,$db_rss,$(pooling_of "$target"),$(pool_size_of "$target"),$DB_COLS,$PROXY_COLS,${SIDE_CPU:-},$box_idle,$on_off" >>"$CSV"
  local qps avg p95 err side=""
  IFS=, read -r _ qps _ avg p95 err _ <<<"$parsed"
  if [[ -n $SIDE_KIND ]]; then
    local sk sn sok sf sd s50 s95 srate snew
    IFS=, read -r sk sn sok sf sd s50 s95 srate snew <<<"$SIDE_COLS"
    if [[ $sk == idle ]]; then side=" idle ok=$sok fail=$sf drop=$sd new_srv_conns=${snew:--}"
    else side=" churn ok=$sok fail=$sf p50=${s50:--}ms p95=${s95:--}ms new_srv_conns=${snew:--}"; fi
    [[ $on_off != "," ]] && side+=" qps_on/off=$(awk -F, '{ if ($2 > 0) printf "%.3f", $1 / $2 }' <<<"$on_off")"
  fi
  local srv_max hs pmax
  IFS=, read -r _ srv_max hs <<<"$DB_COLS"
  IFS=, read -r pmax _ <<<"$PROXY_COLS"
  [[ -n $pmax ]] && srv_max="$srv_max (own $pmax)"
  printf '[%s]   %-12s t=%-3s r=%s %-9s qps=%-9s avg=%-6s p95=%-6s err=%-3s cpu/kq=%-8s rss=%s srv_conns_max=%s handshakes=%s%s%s\n' \
    "$(date +%H:%M:%S)" "$w" "$th" "$rep" "$target" "${qps:-?}" "${avg:-?}" "${p95:-?}" "${err:-?}" \
    "${cpu_kq:--}" "${rss:+$((rss / 1024))MiB}" "${srv_max:--}" "${hs:--}" "$side" "$([[ $rc != 0 ]] && echo " EXIT=$rc (see $logrel)")" >&2
}

# ---------------------------------------------------------------- main
{ has_sluice || has_sluice_tx; } && find_sluice_dist   # fail before any setup when it is missing
SLUICE_JAVA_OPTS_EFFECTIVE=""           # empty = start.sh's defaults
if (( SLUICE_JAVA_OPTS_SET )); then
  SLUICE_JAVA_OPTS_EFFECTIVE=$SLUICE_JAVA_OPTS
elif (( MAX_IDLE > 0 )); then
  SLUICE_JAVA_OPTS_EFFECTIVE=$SLUICE_JAVA_OPTS_C
fi
ensure_tools
MYSQL_BIN=$(command -v mysql || command -v mariadb)
ensure_mariadb
find_db_pid
ensure_max_connections
prepare_data
_tc=$(db_status Threads_connected)
[[ -n $_tc ]] && DB_THREADS_BASE=$(( _tc - 1 ))   # other clients; the query's own connection subtracted
has_target haproxy && start_haproxy
has_sluice && start_sluice sluice
has_sluice_tx && start_sluice sluice_tx

mkdir -p "$OUT/logs"
GIT_REV=$(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
json_str() { python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$1" 2>/dev/null || printf '"%s"' "$1"; }
cat >"$OUT/meta.json" <<EOF
{
  "started_utc": "$STAMP",
  "git_rev": "$GIT_REV",
  "command": $(json_str "benchmark/sysbench/run.sh $ORIG_ARGS"),
  "targets": "$(IFS=,; echo "${TARGET_LIST[*]}")",
  "workloads": "$(IFS=,; echo "${WL_LIST[*]}")",
  "threads_override": "$THREADS",
  "time_s": $TIME,
  "repeats": $REPEATS,
  "rotate_order": $( (( ROTATE )) && echo true || echo false ),
  "warmup_s": $WARMUP,
  "tables": $TABLES,
  "table_size": $TABLE_SIZE,
  "ps_mode": "$PS_MODE",
  "sluice_ssl": $( (( SSL )) && echo true || echo false ),
  "sluice_ssl_provider": "$( (( SSL )) && echo "$SSL_PROVIDER")",
  "idle_counts": "$IDLE_SET",
  "churn_rates": "$CHURN_SET",
  "churn_warmup_s": $CHURN_WARMUP,
  "churn_prewarm_s": $CHURN_PREWARM,
  "churn_blocks": $CHURN_BLOCKS,
  "idle_concurrency": $IDLE_CONCURRENCY,
  "open_files_limit": $NOFILE,
  "haproxy_maxconn": $HAPROXY_MAXCONN,
  "mariadb_max_connections": $(sql "$MYSQL_PORT" 'SELECT @@GLOBAL.max_connections'),
  "mariadb_open_files_limit": "$( [[ -n $DB_PID ]] && nofile_of "$DB_PID")",
  "sluice_java_opts": $(json_str "${SLUICE_JAVA_OPTS_EFFECTIVE:-start.sh defaults}"),
  "sluice_sched": "$( [[ -n ${SLUICE_PID:-} ]] && sched_of "$SLUICE_PID")",
  "haproxy_sched": "$( [[ -n ${HAPROXY_PID:-} ]] && sched_of "$HAPROXY_PID")",
  "sluice_tx_sched": "$( [[ -n ${SLUICE_TX_PID:-} ]] && sched_of "$SLUICE_TX_PID")",
  "sched_autogroup": $AUTOGROUP,
  "cpu_group_harness": "$(cpu_group_of $$)",
  "cpu_group_mariadb": "$( [[ -n $DB_PID ]] && cpu_group_of "$DB_PID")",
  "cpu_group_sluice": "$( [[ -n ${SLUICE_PID:-} ]] && cpu_group_of "$SLUICE_PID")",
  "cpu_group_haproxy": "$( [[ -n ${HAPROXY_PID:-} ]] && cpu_group_of "$HAPROXY_PID")",
  "cpu_group_sluice_tx": "$( [[ -n ${SLUICE_TX_PID:-} ]] && cpu_group_of "$SLUICE_TX_PID")",
  "rand_type": "uniform",
  "worker_threads": $WORKER_THREADS,
  "pooling": "$POOLING",
  "sluice_tx": $(has_sluice_tx && echo true || echo false),
  "sluice_max_pool_size": $( has_sluice && pool_size_of sluice || echo null),
  "sluice_tx_max_pool_size": $( has_sluice_tx && pool_size_of sluice_tx || echo null),
  "sluice_tx_pooling": "$SLUICE_TX_POOLING",
  "sluice_tx_config_extra": "$SLUICE_TX_CONFIG_EXTRA",
  "sluice_tx_java_opts": $(json_str "$( (( SLUICE_TX_JAVA_OPTS_SET )) && echo "$SLUICE_TX_JAVA_OPTS" || echo "as sluice")"),
  "max_pool_size_option": "$MAX_POOL_SIZE",
  "pool_idle_timeout_ms": $POOL_IDLE_MS,
  "idle_db": "$IDLE_DB",
  "db_threads_before_proxies": ${DB_THREADS_BASE:-null},
  "sluice_dist": $(json_str "${SLUICE_DIST:-}"),
  "sluice_tx_dist": $(json_str "${SLUICE_TX_DIST:-}"),
  "machine": {
    "cpus": $(nproc),
    "cpu_model": $(json_str "$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)"),
    "mem_total_kb": $(awk '/^MemTotal:/ {print $2}' /proc/meminfo),
    "kernel": $(json_str "$(uname -r)"),
    "loadavg_at_start": $(json_str "$(cat /proc/loadavg)")
  },
  "versions": {
    "sysbench": $(json_str "$(sysbench --version 2>/dev/null)"),
    "haproxy": $(json_str "$(command -v haproxy >/dev/null && haproxy -v | head -1 || true)"),
    "mariadb": $(json_str "$(sql "$MYSQL_PORT" 'SELECT VERSION()')")
  },
  "note": "proxy, sysbench and MariaDB share the same cores on 127.0.0.1"
}
EOF
echo "$CSV_HEADER" >"$CSV"
[[ -f $WORK/haproxy.cfg ]] && cp "$WORK/haproxy.cfg" "$OUT/haproxy.cfg"
[[ -n $SLUICE_HOME ]] && cp "$SLUICE_HOME/conf/config.yaml" "$OUT/sluice-config.yaml"
[[ -n $SLUICE_TX_HOME ]] && cp "$SLUICE_TX_HOME/conf/config.yaml" "$OUT/sluice_tx-config.yaml"

# RSS of each proxy at rest (rest_rss.csv), for workload b's target (RSS during range_10000 <= 1.2x at rest; see
# report.py). Read after REST_SETTLE_S idle: once at the start of the run, after the first warm-up (JIT compiled,
# pools open; "start"), and again before range_10000's warm-up ("before_range_10000"), since the workloads run before
# it in the same run grow a JVM's heap (new client and server connections each run, metrics scrapes).
REST_SETTLE_S=3
record_rest_rss() {  # record_rest_rss WHEN
  sleep "$REST_SETTLE_S"
  [[ -f $OUT/rest_rss.csv ]] || echo "when,target,rss_kb" >"$OUT/rest_rss.csv"
  local t pid rss
  for t in "${TARGET_LIST[@]}"; do
    pid=$(proxy_pid "$t")
    [[ -n $pid ]] || continue
    rss=$(rss_kb "$pid")
    echo "$1,$t,$rss" >>"$OUT/rest_rss.csv"
    log "at rest ($1): $t RSS $(( ${rss:-0} / 1024 )) MiB"
  done
}

log "results -> ${OUT#"$REPO_ROOT"/}"
log "targets: ${TARGET_LIST[*]} | workloads: ${WL_LIST[*]} | ${TIME}s x ${REPEATS} repeats, warm-up ${WARMUP}s | $TABLES x $TABLE_SIZE rows$( (( CHURN_BLOCKS > 0 && MAX_CHURN > 0 )) && echo " | churn_R: $(( 4 + 10 * CHURN_BLOCKS ))s runs, churn in $CHURN_BLOCKS blocks of 5 s" )"
for grp in "${GROUPS_LIST[@]}"; do
  read -r -a gw <<<"$grp"
  w=${gw[0]}
  for th in $(wl_threads "$w"); do
    if (( ${#gw[@]} > 1 )); then
      log "== ${gw[*]}: $(wl_test "$w") threads=$th, side load per point"
    else
      log "== $w: $(wl_test "$w") $(wl_args "$w") threads=$th"
    fi
    [[ $w == range_10000 && -f $OUT/rest_rss.csv ]] && record_rest_rss before_range_10000
    # --churn-prewarm: a JVM compiles the login path only after some 10,000 logins (C2's thresholds), which at
    # 100-300 churned clients per second is minutes into the measured runs; HAProxy and MariaDB are compiled
    # ahead. d's warm-up then churns at the highest rate, so that d measures a warmed proxy (even with --warmup 0).
    prewarm=0
    (( CHURN_PREWARM > 0 && MAX_CHURN > 0 )) && [[ $w == churn_* ]] && prewarm=$CHURN_PREWARM
    if (( WARMUP > 0 || prewarm > 0 )); then
      for target in "${TARGET_LIST[@]}"; do
        secs=$WARMUP churn_pid=""
        if (( prewarm > 0 )); then
          secs=$prewarm
          log "warm-up of $target: ${secs} s with churn at $MAX_CHURN/s"
          churn_client "$(port_of "$target")" --rate="$MAX_CHURN" --time="$secs" >"$WORK/warmup-churn.log" 2>&1 &
          churn_pid=$!
        fi
        run_sysbench "$w" "$th" "$target" "$secs" "$WORK/warmup.log" \
          || { tail -5 "$WORK/warmup.log" >&2; log "warm-up against $target failed"; }
        [[ -z $churn_pid ]] || wait "$churn_pid" || log "warm-up churn against $target failed (see $WORK/warmup-churn.log)"
      done
    fi
    [[ -f $OUT/rest_rss.csv ]] || record_rest_rss start
    for ((rep = 1; rep <= REPEATS; rep++)); do
      # Each round starts one target later than the one before (direct, haproxy, sluice; then haproxy, sluice,
      # direct; ...), so no target always runs right after the same one: on this 2-core machine a run's QPS
      # depends on what ran just before it (MariaDB's and the kernel's state), and a fixed order was a bias.
      n_targets=${#TARGET_LIST[@]}
      first=$(( ROTATE ? rep - 1 : 0 ))
      for w in "${gw[@]}"; do
        for ((k = 0; k < n_targets; k++)); do
          target=${TARGET_LIST[$(( (first + k) % n_targets ))]}
          measure "$w" "$th" "$rep" "$target"
        done
      done
    done
  done
done

"$PY" "$SCRIPT_DIR/report.py" "$OUT" || log "report.py failed; raw data is in $CSV"
if has_target sluice_capture; then
  "$PY" "$SCRIPT_DIR/capture_report.py" "$OUT" || log "capture_report.py failed; raw data is in $CSV and logs/"
fi

FAILED=$(awk -F, 'NR > 1 && ($7 != 0 || ($13 != "" && $13 != 0)) {n++} END {print n + 0}' "$CSV")
if (( FAILED > 0 )); then
  log "$FAILED run(s) had a non-zero exit or errors (see results.csv columns exit_code, errors)"
  exit 3
fi
if (( SIDE_FAILED > 0 )); then
  log "$SIDE_FAILED run(s) had side-load connections fail or dropped (results.csv side_failed, side_dropped; logs/*.side.log)"
  exit 3
fi
log "done: ${OUT#"$REPO_ROOT"/}"
