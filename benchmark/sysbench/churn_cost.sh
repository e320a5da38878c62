#!/usr/bin/env bash
# What connection churn costs a running proxy per query while point_select runs through it (workload d, by hand).
#
#   benchmark/sysbench/churn_cost.sh --pid PID --port PORT [--rate R] [--windows N] [--threads T]
#
# One sysbench oltp_point_select run of T threads (16) through 127.0.0.1:PORT, and N (6) windows of 10 s in it,
# alternately without and with churn.lua at R (100) connections per second. In each window `perf stat` counts the
# task-clock and context switches of the proxy (PID) and of mariadbd over 8 s, and sysbench's 1-s reports give the
# queries in the same seconds. Printed per window: QPS, and proxy and MariaDB CPU microseconds and context switches
# per query; then the proxy's extra CPU per churned connection, from each churn window against the mean of the
# windows without churn. run.sh's d measures the QPS ratio; this says where the CPU goes when it falls.
# Needs sysbench, perf, and the sbtest data of run.sh (4 tables x 10000 rows). Run it on an otherwise idle machine.
set -euo pipefail

PID="" PORT="" RATE=100 WINDOWS=6 THREADS=16
while [[ $# -gt 0 ]]; do
  case "$1" in
    --pid) PID=$2; shift 2 ;;
    --port) PORT=$2; shift 2 ;;
    --rate) RATE=$2; shift 2 ;;
    --windows) WINDOWS=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[[ -n $PID && -n $PORT ]] || { echo "--pid and --port are required" >&2; exit 2; }
MPID=$(pidof mariadbd) || { echo "no mariadbd running" >&2; exit 2; }
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT
DB=(--mysql-host=127.0.0.1 --mysql-port="$PORT" --mysql-user=root --mysql-password= --mysql-db=sbtest)

# A short churn first, so that the login path is compiled before the first window counts it.
sysbench "$SCRIPT_DIR/churn.lua" "${DB[@]}" --threads=16 --rate="$RATE" --time=3 run >/dev/null 2>&1
sysbench oltp_point_select "${DB[@]}" --tables=4 --table-size=10000 --rand-type=uniform --threads="$THREADS" \
  --time=5 run >/dev/null 2>&1

start=$SECONDS
sysbench oltp_point_select "${DB[@]}" --tables=4 --table-size=10000 --rand-type=uniform --threads="$THREADS" \
  --time=$(( 10 * WINDOWS + 4 )) --report-interval=1 run >"$OUT/sysbench.log" 2>&1 &
sysbench_pid=$!
sleep 2
for (( w = 0; w < WINDOWS; w++ )); do
  mode=off churn_pid=""
  if (( w % 2 == 1 )); then
    mode=on
    sysbench "$SCRIPT_DIR/churn.lua" "${DB[@]}" --threads=16 --rate="$RATE" --time=10 run >/dev/null 2>&1 &
    churn_pid=$!
  fi
  sleep 1   # leave the switch's second out
  t=$(( SECONDS - start ))
  perf stat -x, -e task-clock,context-switches -p "$PID" -- sleep 8 2>"$OUT/proxy_$w.csv" & p1=$!
  perf stat -x, -e task-clock,context-switches -p "$MPID" -- sleep 8 2>"$OUT/mariadb_$w.csv" & p2=$!
  echo "$w $mode $t" >>"$OUT/windows.txt"
  wait "$p1" "$p2"
  [[ -z $churn_pid ]] || wait "$churn_pid" || true
  sleep 1
done
wait "$sysbench_pid"

python3 - "$OUT" "$RATE" <<'PY'
import re, sys
out, rate = sys.argv[1], float(sys.argv[2])
qps = {}
for line in open(f"{out}/sysbench.log"):
    m = re.match(r"\[ *(\d+)s \].*qps: ([\d.]+)", line)
    if m:
        qps[int(m.group(1))] = float(m.group(2))
def counters(path):
    values = {}
    for line in open(path):
        fields = line.strip().split(",")
        if len(fields) > 3 and fields[0] not in ("", "<not counted>", "<not supported>"):
            values[fields[2]] = float(fields[0])
    return values
rows = []
print("| window | churn | QPS | proxy µs / query | proxy context switches / query | MariaDB µs / query | MariaDB context switches / query |")
print("|---:|---|---:|---:|---:|---:|---:|")
for line in open(f"{out}/windows.txt"):
    w, mode, t = line.split()
    t = int(t)
    queries = sum(qps.get(s, 0) for s in range(t + 1, t + 9))   # sysbench's second s covers (s-1, s]
    p, m = counters(f"{out}/proxy_{w}.csv"), counters(f"{out}/mariadb_{w}.csv")
    cpu = p["task-clock"] * 1000 / queries
    rows.append((mode, queries / 8, cpu))
    print(f"| {w} | {mode} | {queries / 8:,.0f} | {cpu:.2f} | {p['context-switches'] / queries:.3f} | "
          f"{m['task-clock'] * 1000 / queries:.2f} | {m['context-switches'] / queries:.3f} |")
off = [cpu for mode, _, cpu in rows if mode == "off"]
base = sum(off) / len(off)
for mode, q, cpu in rows:
    if mode == "on":
        print(f"churn window at {q:,.0f} QPS: proxy +{cpu - base:.2f} µs per query over the windows without, "
              f"{(cpu - base) * q / rate:,.0f} µs per churned connection")
PY
