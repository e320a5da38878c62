#!/usr/bin/env bash
# Read/write splitting benchmark (issue #28): sysbench through Sluice to a disposable MariaDB primary + 2 GTID
# replicas, split (causal reads LOCAL and NONE) vs the primary alone, rounds interleaved. See --help.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/../.." && pwd)
# shellcheck source=../lib/servers.sh
source "$SCRIPT_DIR/../lib/servers.sh"
HOST=127.0.0.1
ORIG_ARGS="$*"

TARGETS="split_local,split_none,primary"
WORKLOADS="oltp_read_only,oltp_read_write"
THREADS="16"
TIME=60
REPEATS=3
WARMUP=10
TABLES=4
TABLE_SIZE=10000
SKIP_TRX=on
WORKER_THREADS=2
SLUICE_DIST=""
SLUICE_B_DIST=""
RESULTS_ROOT="$REPO_ROOT/benchmark/results"
KEEP_WORK=0

usage() {
  cat <<EOF
Usage: benchmark/readwrite/run.sh [options]

Starts its own MariaDB primary + 2 GTID replicas (fresh datadirs in a temp dir, free ports; the shared
MariaDB on 3306 is not used), loads sysbench tables on the primary, starts one Sluice per target from the
distribution (pooling TRANSACTION for all three), and runs sysbench through each, rounds interleaved
(round r starts at the r-th target). Targets:

  split_local  !READWRITE_SPLITTING group (primary + 2 replicas), causalReads: LOCAL (the default)
  split_none   the same group, causalReads: NONE
  primary      Sluice to the primary alone (no rule), same pooling mode
  split_local_b  split_local from the --sluice-b-dist distribution: an A/B of two builds in the same rounds
  split_discovery  split_local with primaryDiscovery: READ_ONLY (issue #40): the primary is the writable server,
               decided at each replica-watch round; against split_local, the cost of following primary changes

Per run: sysbench QPS, p95 latency, errors, and each server's share of the statements it ran (deltas of
SHOW GLOBAL STATUS Questions, Com_select/insert/update/delete read before and after the run). At the end,
the replicas' lag. Output: benchmark/results/<UTC stamp>-readwrite/{summary.md,results.csv,logs/}.

Options
  --targets LIST     comma list of split_local,split_none,primary          [$TARGETS]
  --workloads LIST   sysbench tests: oltp_read_only,oltp_read_write,oltp_point_select,...  [$WORKLOADS]
  --threads LIST     comma list of sysbench thread counts                  [$THREADS]
  --time S           seconds per measured run                              [$TIME]
  --repeats N        rounds (A B C, B C A, ...)                            [$REPEATS]
  --warmup S         unrecorded run per target before each workload/threads group, 0 = none [$WARMUP]
  --tables N         sysbench tables                                       [$TABLES]
  --table-size N     rows per table                                        [$TABLE_SIZE]
  --skip-trx on|off  sysbench --skip_trx [$SKIP_TRX]. With off, sysbench wraps every transaction's statements in
                     BEGIN/COMMIT: a read-write transaction, which the split sends whole to the primary, so the
                     replicas would take (almost) nothing. on = autocommit statements, each routed on its own.
                     With on, oltp_read_write's DELETE + INSERT of one id race between threads (1062 duplicate
                     key, with or without a proxy): ignored by sysbench and counted in the errors column.
  --worker-threads N Sluice server.workerThreads                           [$WORKER_THREADS]
  --sluice-dist PATH sluice-*.tar.gz or unpacked dir   [distribution/target/sluice-*.tar.gz]
  --sluice-b-dist PATH  the distribution target split_local_b runs (e.g. the build before a change)
  --results-dir DIR  parent of the result folder                           [benchmark/results]
  --keep-work        keep the scratch dir (datadirs, Sluice homes and logs)
  -h, --help

Needs sysbench, mariadbd + mariadb-install-db, the mariadb client, curl and a JDK; fails if one is missing.
Full run, 2 workloads x 3 targets x 3 rounds x 60 s + warm-ups: about 22 minutes.
EOF
}

while [[ $# -gt 0 ]]; do
  case "$1" in
    --targets) TARGETS=$2; shift 2 ;;
    --workloads) WORKLOADS=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --time) TIME=$2; shift 2 ;;
    --repeats) REPEATS=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --tables) TABLES=$2; shift 2 ;;
    --table-size) TABLE_SIZE=$2; shift 2 ;;
    --skip-trx) SKIP_TRX=$2; shift 2 ;;
    --worker-threads) WORKER_THREADS=$2; shift 2 ;;
    --sluice-dist) SLUICE_DIST=$2; shift 2 ;;
    --sluice-b-dist) SLUICE_B_DIST=$2; shift 2 ;;
    --results-dir) RESULTS_ROOT=$2; shift 2 ;;
    --keep-work) KEEP_WORK=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown option: $1" ;;
  esac
done

is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }
for v in TIME REPEATS WARMUP TABLES TABLE_SIZE WORKER_THREADS; do is_uint "${!v}" || die "--${v,,}: not a number: ${!v}"; done
(( TIME > 0 && REPEATS > 0 )) || die "--time and --repeats must be above 0"
[[ $SKIP_TRX == on || $SKIP_TRX == off ]] || die "--skip-trx: on or off"
IFS=, read -r -a TARGET_LIST <<<"$TARGETS"
IFS=, read -r -a WL_LIST <<<"$WORKLOADS"
IFS=, read -r -a TH_LIST <<<"$THREADS"
for t in "${TARGET_LIST[@]}"; do [[ $t =~ ^(split_local|split_local_b|split_discovery|split_none|primary)$ ]] || die "unknown target: $t"; done
[[ ",$TARGETS," != *,split_local_b,* || -n $SLUICE_B_DIST ]] || die "target split_local_b needs --sluice-b-dist"
MAX_TH=0
for t in "${TH_LIST[@]}"; do is_uint "$t" || die "--threads: $t"; (( t > MAX_TH )) && MAX_TH=$t; done
POOL_SIZE=$(( MAX_TH * 2 > 100 ? MAX_TH * 2 : 100 ))

lib_require_tools
find_sluice_dist
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT="$RESULTS_ROOT/$STAMP-readwrite"
LIB_WORK=$(mktemp -d "${TMPDIR:-/tmp}/sluice-readwrite.XXXXXX")
SYSBENCH_PID=""

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  set +e
  [[ -n $SYSBENCH_PID ]] && stop_pid "$SYSBENCH_PID" sysbench 5
  lib_cleanup
  if (( KEEP_WORK )); then log "scratch dir kept: $LIB_WORK"; else rm -rf "$LIB_WORK"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT
trap 'log "terminated"; exit 143' TERM

mkdir -p "$OUT/logs"
log "results -> $OUT (scratch $LIB_WORK)"

# ---------------------------------------------------------------- servers and data
mdb_group rw 2
PRIMARY_PORT=${GROUP_PORTS[0]} R1_PORT=${GROUP_PORTS[1]} R2_PORT=${GROUP_PORTS[2]}
SERVER_NAMES=(primary replica1 replica2)
log "preparing sbtest on the primary: $TABLES tables x $TABLE_SIZE rows"
sb_prepare "$PRIMARY_PORT" "$TABLES" "$TABLE_SIZE" "$OUT/logs/prepare.log"
mdb_wait_caught_up "$PRIMARY_PORT" "$R1_PORT" "$R2_PORT"
for p in "$R1_PORT" "$R2_PORT"; do
  n=$(sql "$p" "SELECT COUNT(*) FROM sbtest.sbtest$TABLES")
  [[ $n == "$TABLE_SIZE" ]] || die "replica on $p has $n rows in sbtest$TABLES, expected $TABLE_SIZE"
done
log "replicas have the tables ($(sql "$PRIMARY_PORT" 'SELECT @@GLOBAL.gtid_binlog_pos'))"

# ---------------------------------------------------------------- Sluice, one per target
ds() {  # ds NAME PORT
  printf '  %s:\n    url: jdbc:mysql://%s:%s/sbtest\n    username: root\n    password: ""\n    maxPoolSize: %s\n' \
    "$1" "$HOST" "$2" "$POOL_SIZE"
}
write_config() {  # write_config TARGET FILE ADMIN_PORT
  local target=$1 f=$2 admin=$3
  {
    echo "# generated by benchmark/readwrite/run.sh, target $target"
    echo "databaseName: sbtest"
    echo "dataSources:"
    ds primary "$PRIMARY_PORT"
    if [[ $target == split_* ]]; then
      ds replica1 "$R1_PORT"
      ds replica2 "$R2_PORT"
      cat <<EOF
rules:
- !READWRITE_SPLITTING
  dataSources:
    sbtest_rw:
      writeDataSourceName: primary
      readDataSourceNames: [replica1, replica2]
      causalReads: $([[ $target == split_local* || $target == split_discovery ]] && echo LOCAL || echo NONE)
EOF
      if [[ $target == split_discovery ]]; then echo "      primaryDiscovery: READ_ONLY"; fi
    else
      echo "rules: []"
    fi
    cat <<EOF
pooling:
  mode: TRANSACTION
server:
  address: $HOST
  workerThreads: $WORKER_THREADS
  tls:
    enabled: false
authority:
  users:
    - user: root
      password: ""
admin:
  address: $HOST
  port: $admin
EOF
  } >"$f"
}
declare -A SB_PORT ADMIN_PORT
for t in "${TARGET_LIST[@]}"; do
  free_port 24306; SB_PORT[$t]=$FREE_PORT
  free_port 25080; ADMIN_PORT[$t]=$FREE_PORT
  write_config "$t" "$OUT/sluice-$t.yaml" "${ADMIN_PORT[$t]}"
  if [[ $t == split_local_b ]]; then
    SLUICE_DIST=$SLUICE_B_DIST sluice_start "$t" "${SB_PORT[$t]}" "$OUT/sluice-$t.yaml"
  else
    sluice_start "$t" "${SB_PORT[$t]}" "$OUT/sluice-$t.yaml"
  fi
done
# the split must really split: ask the route API once
if [[ -n ${ADMIN_PORT[split_local]:-} ]]; then
  route=$(curl -s --get --data-urlencode 'sql=SELECT c FROM sbtest1 WHERE id=1' "http://$HOST:${ADMIN_PORT[split_local]}/api/readwrite/route" || true)
  log "split_local routes a point select: $route"
fi

# ---------------------------------------------------------------- runs
CSV="$OUT/results.csv"
echo "workload,threads,round,target,seconds,exit,qps,p95_ms,errors,reconnects,tps,$(for s in "${SERVER_NAMES[@]}"; do printf '%s_questions,%s_select,%s_insert,%s_update,%s_delete,' "$s" "$s" "$s" "$s" "$s"; done)log" >"$CSV"

run_sb() {  # run_sb WORKLOAD THREADS TARGET SECONDS LOG -> exit code of sysbench
  local rc=0
  sysbench "$1" --db-driver=mysql --mysql-host="$HOST" --mysql-port="${SB_PORT[$3]}" --mysql-user=root \
    --mysql-password= --mysql-db=sbtest --tables="$TABLES" --table-size="$TABLE_SIZE" --threads="$2" \
    --time="$4" --rand-type=uniform --skip_trx="$SKIP_TRX" "${IGNORE_ERRORS[@]}" --report-interval=10 run >"$5" 2>&1 </dev/null &
  SYSBENCH_PID=$!
  wait "$SYSBENCH_PID" || rc=$?
  SYSBENCH_PID=""
  return "$rc"
}
# skip_trx=on: oltp_read_write's DELETE and INSERT of one id are two autocommit statements, so two threads that
# pick the same id race (1062 duplicate key) with or without a proxy; sysbench would stop at the first one. It is
# ignored (counted in "errors") instead; any other error still ends the run. The option replaces sysbench's own
# list (1213, 1205, 1020: a deadlock, a lock wait timeout, a changed record), so those are named again: InnoDB gives
# autocommit DELETEs and INSERTs of neighbouring ids a deadlock now and then, proxy or not (a run of 2026-12-06
# ended on one).
IGNORE_ERRORS=()
[[ $SKIP_TRX == on ]] && IGNORE_ERRORS=(--mysql-ignore-errors=1062,1213,1205,1020)
all_counters() { local p; for p in "$PRIMARY_PORT" "$R1_PORT" "$R2_PORT"; do mdb_counters "$p"; done | tr '\n' ' '; }
metrics_snap() { curl -s "http://$HOST:$1/metrics" | grep -E '^sluice_readwrite_(statements|causal_waits)_total' || true; }

FAILED=0
for w in "${WL_LIST[@]}"; do
  for th in "${TH_LIST[@]}"; do
    log "== $w, $th threads, skip_trx=$SKIP_TRX"
    if (( WARMUP > 0 )); then
      for t in "${TARGET_LIST[@]}"; do
        run_sb "$w" "$th" "$t" "$WARMUP" "$LIB_WORK/warmup.log" || { tail -5 "$LIB_WORK/warmup.log" >&2; die "warm-up of $w through $t failed"; }
      done
    fi
    n=${#TARGET_LIST[@]}
    for ((r = 1; r <= REPEATS; r++)); do
      for ((k = 0; k < n; k++)); do
        t=${TARGET_LIST[$(( (r - 1 + k) % n ))]}
        logrel="logs/${w}_t${th}_r${r}_${t}.log"
        mdb_wait_caught_up "$PRIMARY_PORT" "$R1_PORT" "$R2_PORT"   # every run starts with replicas caught up
        metrics_snap "${ADMIN_PORT[$t]}" >"$OUT/${logrel%.log}.metrics-before"
        read -r -a c0 <<<"$(all_counters)"
        rc=0
        run_sb "$w" "$th" "$t" "$TIME" "$OUT/$logrel" || rc=$?
        read -r -a c1 <<<"$(all_counters)"
        metrics_snap "${ADMIN_PORT[$t]}" >"$OUT/${logrel%.log}.metrics-after"
        read -r qps p95 err rec tps <<<"$(sb_parse "$OUT/$logrel")"
        deltas="" share=""
        tot=$(( c1[0] - c0[0] + c1[5] - c0[5] + c1[10] - c0[10] ))
        for i in 0 1 2; do
          for j in 0 1 2 3 4; do deltas+="$(( c1[i * 5 + j] - c0[i * 5 + j] )),"; done
          share+=" ${SERVER_NAMES[$i]}=$(awk -v a="$(( c1[i * 5] - c0[i * 5] ))" -v b="$tot" 'BEGIN{printf "%.0f%%", b ? 100 * a / b : 0}')"
        done
        echo "$w,$th,$r,$t,$TIME,$rc,$qps,$p95,$err,$rec,$tps,$deltas$logrel" >>"$CSV"
        [[ $rc == 0 ]] || FAILED=$((FAILED + 1))
        log "  $w t=$th r=$r $(printf '%-11s' "$t") qps=${qps:-?} p95=${p95:-?}ms err=${err:-?} questions:$share$([[ $rc != 0 ]] && echo " EXIT=$rc (see $logrel)")"
      done
    done
  done
done

# ---------------------------------------------------------------- lag and summary
LAG=""
for i in 1 2; do
  p=${GROUP_PORTS[$i]}
  LAG+="replica$i ($HOST:$p): $(mdb_lag "$p")"$'\n'
done
LAG+="primary gtid_binlog_pos=$(sql "$PRIMARY_PORT" 'SELECT @@GLOBAL.gtid_binlog_pos')"$'\n'
printf '%s' "$LAG" >"$OUT/replica-lag.txt"
log "replica lag at the end:"
printf '%s' "$LAG" | sed 's/^/    /' >&2
cat >"$OUT/meta.txt" <<EOF
command: benchmark/readwrite/run.sh $ORIG_ARGS
git: $(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
started_utc: $STAMP
sluice_dist: $SLUICE_DIST${SLUICE_B_DIST:+ (split_local_b: $SLUICE_B_DIST)}
targets: $TARGETS | workloads: $WORKLOADS | threads: $THREADS | time: $TIME s | repeats: $REPEATS | warmup: $WARMUP s
tables: $TABLES x $TABLE_SIZE | skip_trx: $SKIP_TRX | pooling: TRANSACTION | workerThreads: $WORKER_THREADS | maxPoolSize: $POOL_SIZE
servers: primary $PRIMARY_PORT, replica1 $R1_PORT, replica2 $R2_PORT (MariaDB $(sql "$PRIMARY_PORT" 'SELECT VERSION()'), innodb_buffer_pool_size $MDB_BUFFER_POOL)
machine: $(nproc) CPUs, $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo), load at end $(cut -d' ' -f1-3 /proc/loadavg)
EOF
PY=/usr/bin/python3; [[ -x $PY ]] || PY=python3
"$PY" "$SCRIPT_DIR/report.py" "$OUT" || log "report.py failed; the raw data is in $CSV"
log "summary: $OUT/summary.md"
if (( FAILED > 0 )); then
  log "$FAILED run(s) ended with a sysbench error (results.csv: exit; see their logs)"
  exit 3
fi
