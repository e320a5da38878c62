#!/usr/bin/env bash
# Where a running proxy's CPU goes per query, under a sysbench test (oltp_point_select unless --test).
#
#   benchmark/sysbench/profile_proxy.sh --pid PID --port PORT [--test T] [--seconds S] [--threads N] [--java]
#                                       [--sysbench-args "..."]
#
# Three passes of S seconds each against the proxy listening on 127.0.0.1:PORT (process PID):
#   1. syscalls per query        strace -c (counts only: tracing slows the proxy, so its times are not used)
#   2. context switches, CPU     perf stat -e task-clock,context-switches
#   3. user-space CPU per query  perf record -e cpu-clock:u (samples / frequency / queries), and the top symbols;
#                                with --java, JIT symbols come from `jcmd PID Compiler.perfmap`
# Works for any proxy (HAProxy, Sluice, ...): run it once per proxy, in turn, on an otherwise idle machine.
# Needs sysbench, strace, perf; the sbtest data of run.sh (4 tables x 10000 rows by default).
set -euo pipefail

PID="" PORT="" TEST=oltp_point_select SECONDS_PER_PASS=8 THREADS=16 JAVA=0 SB_ARGS=""
TABLES=4 TABLE_SIZE=10000 DB_USER=root DB_PASSWORD="" FREQ=999
while [[ $# -gt 0 ]]; do
  case "$1" in
    --pid) PID=$2; shift 2 ;;
    --port) PORT=$2; shift 2 ;;
    --test) TEST=$2; shift 2 ;;
    --seconds) SECONDS_PER_PASS=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --tables) TABLES=$2; shift 2 ;;
    --table-size) TABLE_SIZE=$2; shift 2 ;;
    --user) DB_USER=$2; shift 2 ;;
    --password) DB_PASSWORD=$2; shift 2 ;;
    --java) JAVA=1; shift ;;
    --sysbench-args) SB_ARGS=$2; shift 2 ;; # e.g. run.sh's range_10000: see WL_B there
    -h|--help) sed -n 2,13p "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[[ -n $PID && -n $PORT ]] || { echo "--pid and --port are required" >&2; exit 2; }
kill -0 "$PID" 2>/dev/null || { echo "no process $PID" >&2; exit 2; }
for tool in sysbench strace perf; do
  command -v "$tool" >/dev/null || { echo "$tool not found" >&2; exit 2; }
done

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# Runs sysbench for one pass, in the foreground, while the tool started just before it measures; prints the
# queries sysbench completed. The tool sees the pass's 16 logins too: a handful of syscalls against 100,000+ queries.
load() {
  sysbench "$TEST" --mysql-host=127.0.0.1 --mysql-port="$PORT" --mysql-user="$DB_USER" \
    --mysql-password="$DB_PASSWORD" --mysql-db=sbtest --tables="$TABLES" --table-size="$TABLE_SIZE" \
    --threads="$THREADS" --time="$SECONDS_PER_PASS" $SB_ARGS run >"$WORK/sb.out" 2>&1 # SB_ARGS split on purpose
  grep -oP 'queries:\s+\K[0-9]+' "$WORK/sb.out"
}

# Stops the measuring tool started in the background ($TOOL) and waits for it to write its report.
stop_tool() {
  kill -INT "$TOOL" 2>/dev/null || true
  wait "$TOOL" 2>/dev/null || true
}

echo "proxy pid $PID on 127.0.0.1:$PORT, $TEST, $THREADS threads, ${SECONDS_PER_PASS} s per pass"

strace -c -f -p "$PID" -o "$WORK/strace.out" >/dev/null 2>&1 &
TOOL=$!; sleep 1
q=$(load); stop_tool
echo
echo "1. syscalls per query (under strace: $q queries)"
awk -v q="$q" 'NR > 2 && $NF != "total" && $4 ~ /^[0-9]+$/ {
    calls = $4; errors = (NF == 6) ? $5 : 0
    suffix = ""
    if (errors > 0) suffix = sprintf(" (%.2f failed)", errors / q)
    if (calls / q >= 0.01) printf "   %-16s %6.2f per query%s\n", $NF, calls / q, suffix
  }' "$WORK/strace.out"

perf stat -e task-clock,context-switches -p "$PID" -o "$WORK/stat.out" >/dev/null 2>&1 &
TOOL=$!; sleep 1
q=$(load); stop_tool
echo
echo "2. CPU and context switches per query ($q queries)"
awk -v q="$q" '/task-clock/ { gsub(",", "", $1); printf "   task-clock       %6.2f us per query\n", $1 * 1000 / q }
  /context-switches/ { gsub(",", "", $1); printf "   context switches %6.2f per query\n", $1 / q }' "$WORK/stat.out"

perf record -q -F "$FREQ" -e cpu-clock:u -p "$PID" -o "$WORK/user.data" >/dev/null 2>&1 &
TOOL=$!; sleep 1
q=$(load); stop_tool
(( JAVA )) && jcmd "$PID" Compiler.perfmap >/dev/null 2>&1 || true
samples=$(perf script -i "$WORK/user.data" -F ip 2>/dev/null | wc -l)
echo
awk -v s="$samples" -v f="$FREQ" -v q="$q" 'BEGIN { printf "3. user-space CPU: %.2f us per query (%d samples at %d Hz, %d queries); top symbols:\n", s * 1e6 / f / q, s, f, q }'
perf report -i "$WORK/user.data" --no-children --sort sym 2>/dev/null | grep -v '^#' | grep -v '^$' | head -15 \
  | sed 's/^/   /'
