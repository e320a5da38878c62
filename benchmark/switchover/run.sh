#!/usr/bin/env bash
# Planned switchovers in a row under sysbench (issue #40, "done when": ten switchovers under oltp_read_write at 16
# threads, 0 client errors, 0 reconnects, the longest stall per switchover, a ledger check). See --help.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/../.." && pwd)
# shellcheck source=../lib/servers.sh
source "$SCRIPT_DIR/../lib/servers.sh"
HOST=127.0.0.1

SWITCHOVERS=10
INTERVAL=15
THREADS=16
TABLES=4
TABLE_SIZE=10000
WORKER_THREADS=2
SWITCH_TIMEOUT=5000
SLUICE_DIST=""
RESULTS_ROOT="$REPO_ROOT/benchmark/results"
KEEP_WORK=0

usage() {
  cat <<EOF
Usage: benchmark/switchover/run.sh [options]

Starts its own MariaDB primary + 2 GTID replicas (fresh datadirs, free ports; the shared MariaDB on 3306 is not
used), loads sysbench's tables, starts one Sluice from the distribution in front of them as a read/write split
group that follows read_only (primaryDiscovery: READ_ONLY, with administration and replication accounts of its
own; the data sources use an application account without SUPER), then runs sysbench oltp_read_write through it
and, alongside, a ledger writer (one connection, autocommit INSERTs through Sluice, each acknowledgement written
down with the server's time), and performs --switchovers planned switchovers in a row, --interval seconds apart,
each to the next server in turn (POST /api/groups/sbtest_rw/switchover).

Reports (summary.md, results.csv): per switchover its target, the time writes were held (Sluice's report) and
the longest gap between two ledger acknowledgements around it (the stall a client saw); for the run sysbench's
client errors (FATAL lines: a statement that failed outside sysbench's ignore list), reconnects and ignored errors
(deadlocks, 1213/1205/1020, which oltp_read_write makes with or without a proxy), and the ledger check: every
acknowledged ledger write present on the final primary, and the replicas caught up with it.

Options
  --switchovers N    switchovers in a row                                  [$SWITCHOVERS]
  --interval S       seconds between two switchovers (and before the first)  [$INTERVAL]
  --threads N        sysbench threads                                      [$THREADS]
  --tables N         sysbench tables                                       [$TABLES]
  --table-size N     rows per table                                        [$TABLE_SIZE]
  --worker-threads N Sluice server.workerThreads                           [$WORKER_THREADS]
  --timeout MS       each switchover's timeout for open transactions       [$SWITCH_TIMEOUT]
  --sluice-dist PATH sluice-*.tar.gz or unpacked dir   [distribution/target/sluice-*.tar.gz]
  --results-dir DIR  parent of the result folder                           [benchmark/results]
  --keep-work        keep the scratch dir (datadirs, Sluice home and logs)
  -h, --help

Needs sysbench, mariadbd + mariadb-install-db, the mariadb client, curl and a JDK; fails if one is missing.
The full run (10 switchovers, 15 s apart): about 3 minutes plus set-up. Exit status 1 when a check fails.
EOF
}

while [[ $# -gt 0 ]]; do
  case "$1" in
    --switchovers) SWITCHOVERS=$2; shift 2 ;;
    --interval) INTERVAL=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --tables) TABLES=$2; shift 2 ;;
    --table-size) TABLE_SIZE=$2; shift 2 ;;
    --worker-threads) WORKER_THREADS=$2; shift 2 ;;
    --timeout) SWITCH_TIMEOUT=$2; shift 2 ;;
    --sluice-dist) SLUICE_DIST=$2; shift 2 ;;
    --results-dir) RESULTS_ROOT=$2; shift 2 ;;
    --keep-work) KEEP_WORK=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown option: $1" ;;
  esac
done

is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }
for v in SWITCHOVERS INTERVAL THREADS TABLES TABLE_SIZE WORKER_THREADS SWITCH_TIMEOUT; do
  is_uint "${!v}" || die "--${v,,}: not a number: ${!v}"
done
(( SWITCHOVERS > 0 && INTERVAL > 0 && THREADS > 0 )) || die "--switchovers, --interval and --threads must be above 0"

lib_require_tools
find_sluice_dist
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT="$RESULTS_ROOT/$STAMP-switchover"
LIB_WORK=$(mktemp -d "${TMPDIR:-/tmp}/sluice-switchover.XXXXXX")
SYSBENCH_PID=""
LEDGER_PID=""
TOKEN="switchover-bench-$$"

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  set +e
  [[ -n $SYSBENCH_PID ]] && stop_pid "$SYSBENCH_PID" sysbench 5
  touch "$LIB_WORK/stop-ledger"
  [[ -n $LEDGER_PID ]] && sleep 0.5 && stop_pid "$LEDGER_PID" ledger 5
  lib_cleanup
  if (( KEEP_WORK )); then log "scratch dir kept: $LIB_WORK"; else rm -rf "$LIB_WORK"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT
trap 'log "terminated"; exit 143' TERM

mkdir -p "$OUT/logs"
log "results -> $OUT (scratch $LIB_WORK)"

# ---------------------------------------------------------------- servers, accounts, data
mdb_group sw 2
PORTS=("${GROUP_PORTS[@]}")
NAMES=(primary replica1 replica2)
sql "${PORTS[0]}" "
  CREATE USER sb_app@'$HOST' IDENTIFIED BY 'sb_app_pw';
  GRANT ALL PRIVILEGES ON sbtest.* TO sb_app@'$HOST';
  GRANT SLAVE MONITOR ON *.* TO sb_app@'$HOST';
  CREATE USER sb_admin@'$HOST' IDENTIFIED BY 'sb_admin_pw';
  GRANT RELOAD, READ_ONLY ADMIN, REPLICATION SLAVE ADMIN, SLAVE MONITOR ON *.* TO sb_admin@'$HOST';
  CREATE USER sb_repl@'$HOST' IDENTIFIED BY 'sb_repl_pw';
  GRANT REPLICATION SLAVE ON *.* TO sb_repl@'$HOST'"
log "preparing sbtest on the primary: $TABLES tables x $TABLE_SIZE rows"
sb_prepare "${PORTS[0]}" "$TABLES" "$TABLE_SIZE" "$OUT/logs/prepare.log"
sql "${PORTS[0]}" "CREATE TABLE sbtest.ledger (k INT PRIMARY KEY, server INT NOT NULL,
  at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6))"
mdb_wait_caught_up "${PORTS[0]}" "${PORTS[1]}" "${PORTS[2]}"

# ---------------------------------------------------------------- Sluice
free_port 24306; SLUICE_PORT=$FREE_PORT
free_port 25080; ADMIN_PORT=$FREE_PORT
{
  echo "# generated by benchmark/switchover/run.sh"
  echo "dataSources:"
  for i in 0 1 2; do
    printf '  %s:\n    url: jdbc:mysql://%s:%s/sbtest\n    username: sb_app\n    password: sb_app_pw\n    maxPoolSize: %s\n' \
      "${NAMES[$i]}" "$HOST" "${PORTS[$i]}" $(( THREADS * 2 + 10 ))
  done
  cat <<EOF
rules:
- !READWRITE_SPLITTING
  dataSources:
    sbtest_rw:
      writeDataSourceName: primary
      readDataSourceNames: [replica1, replica2]
      primaryDiscovery: READ_ONLY
      administration: {username: sb_admin, password: sb_admin_pw}
      replication: {username: sb_repl, password: sb_repl_pw}
healthCheck:
  intervalMilliseconds: 500
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
  port: $ADMIN_PORT
  token: $TOKEN
EOF
} >"$OUT/sluice.yaml"
sluice_start switchover "$SLUICE_PORT" "$OUT/sluice.yaml"
api() {  # api METHOD PATH -> body
  curl -s -X "$1" -H "Authorization: Bearer $TOKEN" "http://$HOST:$ADMIN_PORT$2"
}
for ((i = 0; i < 100; i++)); do
  api GET /api/groups/sbtest_rw | grep -q '"state":"primary"' && break
  sleep 0.1
done
(( i < 100 )) || die "the group has no primary after 10 s: $(api GET /api/groups/sbtest_rw)"

# ---------------------------------------------------------------- load: sysbench and the ledger
TOTAL=$(( (SWITCHOVERS + 1) * INTERVAL ))
sysbench oltp_read_write --db-driver=mysql --mysql-host="$HOST" --mysql-port="$SLUICE_PORT" --mysql-user=root \
  --mysql-password= --mysql-db=sbtest_rw --tables="$TABLES" --table-size="$TABLE_SIZE" --threads="$THREADS" \
  --time="$TOTAL" --report-interval=1 run >"$OUT/logs/sysbench.log" 2>&1 &
SYSBENCH_PID=$!
LIB_BG_PIDS+=("$SYSBENCH_PID")
# One connection; each INSERT is followed by its own acknowledgement row (k, ROW_COUNT(), the server's time): a
# row with 1 is a write the server acknowledged. --force goes on after an error, -n flushes after each statement.
(
  for ((k = 1; ; k++)); do
    [[ -e $LIB_WORK/stop-ledger ]] && break # the client then reads EOF and ends by itself
    echo "INSERT INTO ledger (k, server) VALUES ($k, @@server_id); SELECT $k, ROW_COUNT(), UNIX_TIMESTAMP(NOW(6));"
    sleep 0.01
  done | "$MYSQL_BIN" -h "$HOST" -P "$SLUICE_PORT" -u root --protocol=TCP -D sbtest_rw -N -B -n --force \
    >"$OUT/logs/ledger.tsv" 2>"$OUT/logs/ledger-errors.log"
) &
LEDGER_PID=$!
LIB_BG_PIDS+=("$LEDGER_PID")

# ---------------------------------------------------------------- switchovers
echo "n,from,to,switched,writes_held_ms,longest_ledger_gap_ms,started_at,ended_at" >"$OUT/results.csv"
current=primary
for ((n = 1; n <= SWITCHOVERS; n++)); do
  sleep "$INTERVAL"
  # the next server in turn that is not the primary now
  for i in 0 1 2; do [[ ${NAMES[$i]} == "$current" ]] && break; done
  target=${NAMES[$(( (i + 1) % 3 ))]}
  started=$(date +%s.%N)
  report=$(api POST "/api/groups/sbtest_rw/switchover?to=$target&timeout=$SWITCH_TIMEOUT")
  ended=$(date +%s.%N)
  echo "$report" >"$OUT/logs/switchover-$n.json"
  switched=$(grep -o '"switched":[a-z]*' <<<"$report" | cut -d: -f2)
  held=$(grep -o '"writesHeldMilliseconds":-\?[0-9]*' <<<"$report" | cut -d: -f2)
  log "switchover $n: $current -> $target: switched=$switched, writes held ${held} ms"
  [[ $switched == true ]] && current=$target
  echo "$n,${NAMES[$i]},$target,$switched,$held,,$started,$ended" >>"$OUT/results.csv"
done
wait "$SYSBENCH_PID" || log "sysbench exited with $?"
SYSBENCH_PID=""
touch "$LIB_WORK/stop-ledger"
for ((i = 0; i < 100; i++)); do kill -0 "$LEDGER_PID" 2>/dev/null || break; sleep 0.1; done
stop_pid "$LEDGER_PID" ledger 5
LEDGER_PID=""

# ---------------------------------------------------------------- the checks
# The longest gap between two acknowledgements from 1 s before each switchover to 2 s after it.
awk -F, -v OFS=, 'NR == FNR { if ($2 == 1) at[++acks] = $3; next }
  FNR == 1 { print; next }
  { gap = 0; from = $7 - 1; to = $8 + 2
    for (a = 2; a <= acks; a++) if (at[a] >= from && at[a - 1] <= to && at[a] - at[a - 1] > gap) gap = at[a] - at[a - 1]
    $6 = sprintf("%.0f", gap * 1000); print }' FS='\t' "$OUT/logs/ledger.tsv" FS=, "$OUT/results.csv" >"$OUT/results.tmp"
mv "$OUT/results.tmp" "$OUT/results.csv"

for i in 0 1 2; do [[ ${NAMES[$i]} == "$current" ]] && FINAL_PORT=${PORTS[$i]}; done
awk -F'\t' '$2 == 1 { print $1 }' "$OUT/logs/ledger.tsv" | sort -n >"$LIB_WORK/acked"
sql "$FINAL_PORT" 'SELECT k FROM sbtest.ledger' | sort -n >"$LIB_WORK/landed"
ACKED=$(wc -l <"$LIB_WORK/acked")
MISSING=$(comm -23 "$LIB_WORK/acked" "$LIB_WORK/landed" | wc -l)
LEDGER_ERRORS=$(grep -c '^ERROR' "$OUT/logs/ledger-errors.log" || true)
others=()
for i in 0 1 2; do [[ ${PORTS[$i]} == "$FINAL_PORT" ]] || others+=("${PORTS[$i]}"); done
CAUGHT_UP=yes
mdb_wait_caught_up "$FINAL_PORT" "${others[@]}" || CAUGHT_UP=no
read -r QPS P95 IGNORED RECONNECTS TPS <<<"$(sb_parse "$OUT/logs/sysbench.log")"
FATAL=$(grep -c 'FATAL' "$OUT/logs/sysbench.log" || true)
SWITCHED=$(awk -F, 'NR > 1 && $4 == "true"' "$OUT/results.csv" | wc -l)
LONGEST=$(awk -F, 'NR > 1 && $6 > m { m = $6 } END { print m + 0 }' "$OUT/results.csv")
HELD_MAX=$(awk -F, 'NR > 1 && $5 > m { m = $5 } END { print m + 0 }' "$OUT/results.csv")

{
  echo "# $SWITCHOVERS planned switchovers under sysbench oltp_read_write, $THREADS threads ($STAMP)"
  echo
  echo "| # | from | to | switched | writes held (ms) | longest ledger gap (ms) |"
  echo "| --- | --- | --- | --- | --- | --- |"
  awk -F, 'NR > 1 { printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6 }' "$OUT/results.csv"
  echo
  echo "- switched: $SWITCHED of $SWITCHOVERS; the longest stall a ledger client saw: $LONGEST ms (writes held at most $HELD_MAX ms)"
  echo "- sysbench: $TPS tps, $QPS qps, p95 $P95 ms; client errors (FATAL): $FATAL; reconnects: $RECONNECTS;"
  echo "  ignored errors (deadlocks and lock waits of oltp_read_write itself): $IGNORED"
  echo "- ledger: $ACKED writes acknowledged, $MISSING missing on the final primary (${NAMES[*]}: final $current);"
  echo "  ledger client errors: $LEDGER_ERRORS; the other servers caught up with it: $CAUGHT_UP"
} >"$OUT/summary.md"
cat "$OUT/summary.md"
(( FATAL == 0 && ${RECONNECTS:-0} == 0 && MISSING == 0 && LEDGER_ERRORS == 0 && SWITCHED == SWITCHOVERS )) \
  || { log "a check failed (see $OUT/summary.md)"; exit 1; }
