#!/usr/bin/env bash
# Many accounts through Sluice (issue #39): N server accounts x one sysbench process each, through Sluice in
# transaction pooling, each session running on the server as its own account; reports QPS and how many server
# connections that takes. See --help.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/../.." && pwd)
# shellcheck source=../lib/servers.sh
source "$SCRIPT_DIR/../lib/servers.sh"
HOST=127.0.0.1
ORIG_ARGS="$*"

MODES="FROM_BACKEND,MAPPED,SHARED"
ACCOUNTS=10
THREADS=10
TIME=60
REPEATS=1
WARMUP=5
TABLES=4
TABLE_SIZE=10000
WORKLOAD=oltp_point_select
POOL_SIZE=200
POOL_PER_ACCOUNT=0
WORKER_THREADS=2
SLUICE_DIST=""
RESULTS_ROOT="$REPO_ROOT/benchmark/results"
KEEP_WORK=0

usage() {
  cat <<EOF
Usage: benchmark/sysbench/accounts.sh [options]

Starts its own MariaDB (fresh datadir in a temp dir, a free port; the shared MariaDB on 3306 is not used), loads
sysbench's tables, creates --accounts server accounts (acct_bench01...) with SELECT on them, and for each run
starts Sluice from the distribution (pooling TRANSACTION), runs one sysbench process per account at once, each
with --threads threads, for --time seconds, and stops Sluice (one Sluice at a time: the server's connections are
the run's own). Modes:

  FROM_BACKEND  authority.users: FROM_BACKEND: clients log in with the server's accounts and run as them
  MAPPED        one Sluice user per account (app01...), each with backendUser acct_benchNN: runs as it
  SHARED        the same Sluice users without backendUser: every session runs as the data source's account (root),
                the behaviour before issue #39, for comparison

While sysbench runs, the server is polled every second: Threads_connected, and its processlist counted by user.
Per run: the sum of the processes' QPS, the slowest process's p95, errors, the most server connections seen
(Threads_connected, which includes the poller's own and Sluice's health checks) and the most per account.
Output: benchmark/results/<UTC stamp>-accounts/{summary.md,results.csv,logs/}.

Options
  --modes LIST          comma list of FROM_BACKEND,MAPPED,SHARED              [$MODES]
  --accounts N          server accounts, one sysbench process each           [$ACCOUNTS]
  --threads N           sysbench threads per process                          [$THREADS]
  --time S              seconds per measured run                              [$TIME]
  --repeats N           rounds over the modes (rotated: A B C, B C A, ...)    [$REPEATS]
  --warmup S            unrecorded run per mode first, 0 = none               [$WARMUP]
  --workload NAME       sysbench test                                         [$WORKLOAD]
  --tables N            sysbench tables                                       [$TABLES]
  --table-size N        rows per table                                        [$TABLE_SIZE]
  --pool-size N         the data source's maxPoolSize                         [$POOL_SIZE]
  --pool-per-account N  maxPoolSizePerAccount (0: only maxPoolSize bounds)    [$POOL_PER_ACCOUNT]
  --worker-threads N    Sluice server.workerThreads                           [$WORKER_THREADS]
  --sluice-dist PATH    sluice-*.tar.gz or unpacked dir   [distribution/target/sluice-*.tar.gz]
  --results-dir DIR     parent of the result folder                           [benchmark/results]
  --keep-work           keep the scratch dir (datadir, Sluice homes and logs)
  -h, --help

Needs sysbench, mariadbd + mariadb-install-db, the mariadb client, curl and a JDK; fails if one is missing.
Default run, 3 modes x (Sluice start + 5 s warm-up + 60 s): about 4 minutes. A check that it works: --time 10 --warmup 0.
EOF
}

while [[ $# -gt 0 ]]; do
  case "$1" in
    --modes) MODES=$2; shift 2 ;;
    --accounts) ACCOUNTS=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --time) TIME=$2; shift 2 ;;
    --repeats) REPEATS=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --workload) WORKLOAD=$2; shift 2 ;;
    --tables) TABLES=$2; shift 2 ;;
    --table-size) TABLE_SIZE=$2; shift 2 ;;
    --pool-size) POOL_SIZE=$2; shift 2 ;;
    --pool-per-account) POOL_PER_ACCOUNT=$2; shift 2 ;;
    --worker-threads) WORKER_THREADS=$2; shift 2 ;;
    --sluice-dist) SLUICE_DIST=$2; shift 2 ;;
    --results-dir) RESULTS_ROOT=$2; shift 2 ;;
    --keep-work) KEEP_WORK=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown option: $1" ;;
  esac
done

IFS=, read -r -a MODE_LIST <<<"$MODES"
for m in "${MODE_LIST[@]}"; do
  [[ $m == FROM_BACKEND || $m == MAPPED || $m == SHARED ]] || die "--modes: $m (expected FROM_BACKEND, MAPPED or SHARED)"
done
(( ACCOUNTS >= 1 && ACCOUNTS <= 99 )) || die "--accounts: $ACCOUNTS (expected 1..99)"
lib_require_tools
find_sluice_dist
MDB_MAX_CONNECTIONS=$(( ACCOUNTS * THREADS + POOL_SIZE + 50 ))

STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT="$RESULTS_ROOT/$STAMP-accounts"
mkdir -p "$OUT/logs"
LIB_WORK=$(mktemp -d "${TMPDIR:-/tmp}/sluice-accounts-XXXXXX")
cleanup() {
  lib_cleanup
  if (( KEEP_WORK )); then log "work dir kept: $LIB_WORK"; else rm -rf "$LIB_WORK"; fi
}
trap cleanup EXIT
CSV="$OUT/results.csv"
echo "mode,round,accounts,threads,time_s,exit,qps_total,qps_min_account,qps_max_account,p95_max_ms,errors,max_threads_connected,max_account_connections,log" >"$CSV"

# ---------------------------------------------------------------- server, tables, accounts
mdb_start accounts 1 standalone
PORT=$MDB_PORT
sb_prepare "$PORT" "$TABLES" "$TABLE_SIZE" "$LIB_WORK/prepare.log"
account() { printf 'acct_bench%02d' "$1"; }
sluice_user() { printf 'app%02d' "$1"; }
password() { printf 'pw-%02d-secret' "$1"; }
for ((i = 1; i <= ACCOUNTS; i++)); do
  sql "$PORT" "CREATE USER '$(account "$i")'@'%' IDENTIFIED VIA mysql_native_password USING PASSWORD('$(password "$i")');
    GRANT SELECT ON sbtest.* TO '$(account "$i")'@'%'"
done
log "$ACCOUNTS server accounts acct_bench01.. with SELECT on sbtest"

write_config() {  # write_config MODE FILE ADMIN_PORT
  local mode=$1 f=$2 admin=$3 i
  {
    echo "# generated by benchmark/sysbench/accounts.sh, mode $mode"
    echo "databaseName: sbtest"
    echo "dataSources:"
    printf '  ds_0:\n    url: jdbc:mysql://%s:%s/sbtest\n    username: root\n    password: ""\n    maxPoolSize: %s\n' \
      "$HOST" "$PORT" "$POOL_SIZE"
    printf '    maxPoolSizePerAccount: %s\n' "$POOL_PER_ACCOUNT"
    cat <<EOF
rules: []
pooling:
  mode: TRANSACTION
server:
  address: $HOST
  workerThreads: $WORKER_THREADS
  tls:
    enabled: false
admin:
  address: $HOST
  port: $admin
authority:
EOF
    if [[ $mode == FROM_BACKEND ]]; then
      echo "  users: FROM_BACKEND"
    else
      echo "  users:"
      echo '    - user: root@%'   # the readiness check's login (sluice_start): runs as the data source's root
      echo '      password: ""'
      for ((i = 1; i <= ACCOUNTS; i++)); do
        printf '    - user: %s@%%\n      password: "%s"\n' "$(sluice_user "$i")" "$(password "$i")"
        if [[ $mode == MAPPED ]]; then
          printf '      backendUser: %s\n      backendPassword: "%s"\n' "$(account "$i")" "$(password "$i")"
        fi
      done
    fi
  } >"$f"
}

declare -A SLUICE_PORT ADMIN_PORT
admin_base=29000
for m in "${MODE_LIST[@]}"; do
  free_port 24306; SLUICE_PORT[$m]=$FREE_PORT
  free_port $admin_base; ADMIN_PORT[$m]=$FREE_PORT; admin_base=$FREE_PORT
  write_config "$m" "$LIB_WORK/config-$m.yaml" "${ADMIN_PORT[$m]}"
  cp "$LIB_WORK/config-$m.yaml" "$OUT/logs/config-$m.yaml"
done

# ---------------------------------------------------------------- runs
client_user() {  # client_user MODE I: whom sysbench logs in to Sluice as
  if [[ $1 == FROM_BACKEND ]]; then account "$2"; else sluice_user "$2"; fi
}

poll_connections() {  # poll_connections FILE: every second, "threads_connected user=n user=n ..." until killed
  while :; do
    {
      printf '%s' "$(sql "$PORT" "SHOW GLOBAL STATUS LIKE 'Threads_connected'" | awk '{print $2}')"
      sql "$PORT" "SELECT USER, COUNT(*) FROM information_schema.PROCESSLIST GROUP BY USER" |
        awk '{printf " %s=%s", $1, $2}'
      echo
    } >>"$1" 2>/dev/null || true
    sleep 1
  done
}

run_mode() {  # run_mode MODE SECONDS LOGPREFIX: all processes at once; returns the first non-zero exit
  local mode=$1 secs=$2 prefix=$3 i rc=0 pids=()
  for ((i = 1; i <= ACCOUNTS; i++)); do
    sysbench "$WORKLOAD" --db-driver=mysql --mysql-host="$HOST" --mysql-port="${SLUICE_PORT[$mode]}" \
      --mysql-user="$(client_user "$mode" "$i")" --mysql-password="$(password "$i")" --mysql-db=sbtest \
      --mysql-ssl=off --tables="$TABLES" --table-size="$TABLE_SIZE" --threads="$THREADS" --time="$secs" \
      --report-interval=0 --db-ps-mode=disable run >"${prefix}_$(printf '%02d' "$i").log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || rc=$?; done
  return $rc
}

FAILED=0
BASELINE=$(sql "$PORT" "SHOW GLOBAL STATUS LIKE 'Threads_connected'" | awk '{print $2}')
n=${#MODE_LIST[@]}
for ((r = 1; r <= REPEATS; r++)); do
  for ((k = 0; k < n; k++)); do
    m=${MODE_LIST[$(( (r - 1 + k) % n ))]}
    # One Sluice at a time, started for the run and stopped after it: the server's connections are this mode's only.
    sluice_start "$m-r$r" "${SLUICE_PORT[$m]}" "$LIB_WORK/config-$m.yaml"
    if (( WARMUP > 0 )); then
      run_mode "$m" "$WARMUP" "$LIB_WORK/warmup_$m" || die "warm-up of $m failed: $(tail -3 "$LIB_WORK/warmup_${m}_01.log")"
    fi
    prefix="$OUT/logs/${m}_r${r}"
    : >"$prefix.connections"
    poll_connections "$prefix.connections" &
    poller=$!
    LIB_BG_PIDS+=("$poller")
    rc=0
    run_mode "$m" "$TIME" "$prefix" || rc=$?
    stop_pid "$poller" poller 5
    stop_pid "$SLUICE_PID" "Sluice $m" 20
    total=0 min="" max="" p95max=0 errs=0
    for ((i = 1; i <= ACCOUNTS; i++)); do
      read -r qps p95 err _ _ <<<"$(sb_parse "${prefix}_$(printf '%02d' "$i").log")"
      qps=${qps:-0} p95=${p95:-0} err=${err:-0}
      total=$(awk -v a="$total" -v b="$qps" 'BEGIN{printf "%.2f", a + b}')
      min=$(awk -v a="${min:-$qps}" -v b="$qps" 'BEGIN{print (b < a ? b : a)}')
      max=$(awk -v a="${max:-$qps}" -v b="$qps" 'BEGIN{print (b > a ? b : a)}')
      p95max=$(awk -v a="$p95max" -v b="$p95" 'BEGIN{print (b > a ? b : a)}')
      errs=$(( errs + ${err%%.*} ))
    done
    # The most server connections seen, and the most any one of the benchmark's (or the shared root) account had.
    maxconn=$(awk 'NF {if ($1 > m) m = $1} END {print m + 0}' "$prefix.connections")
    maxacct=$(awk -v mode="$m" '{for (i = 2; i <= NF; i++) {split($i, kv, "=");
        if ((mode == "SHARED" && kv[1] == "root") || kv[1] ~ /^acct_bench/) if (kv[2] > m) m = kv[2]}} END {print m + 0}' \
      "$prefix.connections")
    echo "$m,$r,$ACCOUNTS,$THREADS,$TIME,$rc,$total,$min,$max,$p95max,$errs,$maxconn,$maxacct,logs/${m}_r${r}_NN.log" >>"$CSV"
    [[ $rc == 0 ]] || FAILED=$((FAILED + 1))
    log "  $(printf '%-12s' "$m") r=$r qps=$total (per account $min..$max) p95<=${p95max}ms errors=$errs" \
      "server connections<=$maxconn (per account<=$maxacct)$([[ $rc != 0 ]] && echo " EXIT=$rc")"
  done
done

# ---------------------------------------------------------------- summary
{
  echo "# $ACCOUNTS accounts x $THREADS threads, $WORKLOAD, transaction pooling ($STAMP)"
  echo
  echo "command: \`benchmark/sysbench/accounts.sh $ORIG_ARGS\`  "
  echo "git: $(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown); sluice_dist: $SLUICE_DIST  "
  echo "server: MariaDB $(sql "$PORT" 'SELECT VERSION()'), maxPoolSize $POOL_SIZE, maxPoolSizePerAccount $POOL_PER_ACCOUNT," \
    "workerThreads $WORKER_THREADS; tables $TABLES x $TABLE_SIZE; $TIME s per run  "
  echo "machine: $(nproc) CPUs, load at end $(cut -d' ' -f1-3 /proc/loadavg)  "
  echo "server connections before any Sluice started: $BASELINE (the script's own client)"
  echo
  echo "| mode | round | QPS (sum) | QPS per account (min..max) | p95 max (ms) | errors | server connections (max) | per account (max) |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
  tail -n +2 "$CSV" | awk -F, '{printf "| %s | %s | %s | %s..%s | %s | %s | %s | %s |\n", $1, $2, $7, $8, $9, $10, $11, $12, $13}'
  echo
  echo "Server connections: Threads_connected, polled every second (includes the poller and Sluice's health checks);"
  echo "per account: the most processlist rows of one acct_bench account (SHARED: of root, which all sessions share)."
} >"$OUT/summary.md"
cat "$OUT/summary.md"
log "summary: $OUT/summary.md"
if (( FAILED > 0 )); then
  log "$FAILED run(s) ended with a sysbench error (see their logs)"
  exit 3
fi
