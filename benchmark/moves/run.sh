#!/usr/bin/env bash
# Live session moves benchmark (issue #31): QPS through a Sluice group of three MariaDB servers while one is
# drained (and undrained), moves on vs off, and the latency of the first statement after a move. See --help.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/../.." && pwd)
# shellcheck source=../lib/servers.sh
source "$SCRIPT_DIR/../lib/servers.sh"
HOST=127.0.0.1
ORIG_ARGS="$*"

POOLING=transaction
TEST=oltp_read_write
THREADS=16
TIME=30
DRAIN_AT=10
UNDRAIN_AT=20
DRAIN_BACKEND=ds_1
REPEATS=3
WARMUP=10
TABLES=4
TABLE_SIZE=10000
MOVE_COST=200
WORKER_THREADS=2
SLUICE_DIST=""
STAY_DIST=""
RESULTS_ROOT="$REPO_ROOT/benchmark/results"
KEEP_WORK=0

usage() {
  cat <<EOF
Usage: benchmark/moves/run.sh [options]

Starts three disposable standalone MariaDB servers (fresh datadirs in a temp dir, free ports; the shared
MariaDB on 3306 is not used), loads the same sysbench tables into each, and starts one Sluice per leg from
the distribution, a group of the three (ds_0, ds_1, ds_2; LEAST_CONNECTIONS). Each measured run is one
sysbench run of --time s with 1-s reports; at --drain-at s the harness drains --drain-backend through the admin
API (POST /api/backends/NAME/drain), at --undrain-at s undrains it. Legs, interleaved round by round:

  tx_moves    pooling TRANSACTION, pooling.sessionMovesPerSecond at its default (100)
  tx_nomoves  pooling TRANSACTION, sessionMovesPerSecond: 0
  session     pooling SESSION (with --pooling ...,session): sessions move at their idle moment, with their
              server-side prepared statements (decisions 104, 106)
  session_stay  pooling SESSION on --stay-dist, a build without session moves (given: main before them): a
              drain without moves, where the drained backend keeps its sessions until they end

What differs between the legs (docs/configuration.md, pooling): in TRANSACTION pooling a drained backend's
sessions always move away between their transactions, whatever sessionMovesPerSecond says; that setting only
paces the moves back (rebalance) once the backend is undrained. So tx_moves and tx_nomoves should match around
the drain (a control) and differ after the undrain (tx_nomoves leaves the backend empty). A drain with moves
against one without is session against session_stay: the same pooling, with and without moves.

Reported per run (summary.md): median QPS of the seconds before the drain, the minimum second in the 5 s after
the drain and after the undrain (and its ratio to that median), errors and reconnects, the sessions on the
drained backend (polled from GET /api/sessions every 0.2 s) and how long they took to reach 0,
sluice_session_moves_total by reason.

Cost of one move (after the legs, on tx_moves' Sluice and then on session's, nothing else running): move_cost.py (PyMySQL) keeps one
session with state (sql_mode, a user variable), plus 6 idle sessions that keep the pools warm, and, --move-cost
times, drains its backend, waits until the
session is on another one, and times the first point select there, against the same statement with no move
(idle times before each recorded); median and p95 of both, split by whether the move had to open a backend connection.

Options
  --pooling LIST       transaction or transaction,session                     [$POOLING]
  --test NAME          oltp_read_write or oltp_point_select                   [$TEST]
  --threads N          sysbench threads                                       [$THREADS]
  --time S             seconds per run                                        [$TIME]
  --drain-at S         second of the drain                                    [$DRAIN_AT]
  --undrain-at S       second of the undrain, 0 = stays drained to the end    [$UNDRAIN_AT]
  --drain-backend NAME ds_0, ds_1 or ds_2                                     [$DRAIN_BACKEND]
  --repeats N          rounds                                                 [$REPEATS]
  --warmup S           unrecorded run per leg first, no drain, 0 = none       [$WARMUP]
  --tables N / --table-size N                                                 [$TABLES / $TABLE_SIZE]
  --move-cost N        moves measured by move_cost.py, 0 = skip this part     [$MOVE_COST]
  --worker-threads N   Sluice server.workerThreads                            [$WORKER_THREADS]
  --sluice-dist PATH   sluice-*.tar.gz or unpacked dir  [distribution/target/sluice-*.tar.gz]
  --stay-dist PATH     adds the session_stay leg: SESSION pooling on this build (one without session moves)
  --results-dir DIR    parent of the result folder                            [benchmark/results]
  --keep-work          keep the scratch dir
  -h, --help

Needs sysbench, mariadbd + mariadb-install-db, the mariadb client, curl, a JDK and python3 with PyMySQL
(Debian: python3-pymysql); fails if one is missing. Output: benchmark/results/<UTC stamp>-moves/.
Full run (defaults): 2 legs x 3 rounds x 30 s + warm-ups + 200 moves: about 6 minutes.
EOF
}

while [[ $# -gt 0 ]]; do
  case "$1" in
    --pooling) POOLING=$2; shift 2 ;;
    --test) TEST=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --time) TIME=$2; shift 2 ;;
    --drain-at) DRAIN_AT=$2; shift 2 ;;
    --undrain-at) UNDRAIN_AT=$2; shift 2 ;;
    --drain-backend) DRAIN_BACKEND=$2; shift 2 ;;
    --repeats) REPEATS=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --tables) TABLES=$2; shift 2 ;;
    --table-size) TABLE_SIZE=$2; shift 2 ;;
    --move-cost) MOVE_COST=$2; shift 2 ;;
    --worker-threads) WORKER_THREADS=$2; shift 2 ;;
    --sluice-dist) SLUICE_DIST=$2; shift 2 ;;
    --stay-dist) STAY_DIST=$2; shift 2 ;;
    --results-dir) RESULTS_ROOT=$2; shift 2 ;;
    --keep-work) KEEP_WORK=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown option: $1" ;;
  esac
done

is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }
for v in THREADS TIME DRAIN_AT UNDRAIN_AT REPEATS WARMUP TABLES TABLE_SIZE MOVE_COST WORKER_THREADS; do
  is_uint "${!v}" || die "--${v,,}: not a number: ${!v}"
done
[[ $TEST == oltp_read_write || $TEST == oltp_point_select ]] || die "--test: oltp_read_write or oltp_point_select"
[[ $DRAIN_BACKEND =~ ^ds_[012]$ ]] || die "--drain-backend: ds_0, ds_1 or ds_2"
(( DRAIN_AT > 0 && DRAIN_AT < TIME )) || die "--drain-at must be within the run (0 < $DRAIN_AT < --time $TIME)"
(( UNDRAIN_AT == 0 || (UNDRAIN_AT > DRAIN_AT && UNDRAIN_AT < TIME) )) || die "--undrain-at: 0, or between --drain-at and --time"
(( REPEATS > 0 )) || die "--repeats must be above 0"
LEGS=(tx_moves tx_nomoves)
case $POOLING in
  transaction) ;;
  transaction,session|session,transaction) LEGS+=(session) ;;
  session) LEGS=(session) ;;
  *) die "--pooling: transaction, or transaction,session" ;;
esac
if [[ -n ${STAY_DIST:-} ]]; then
  [[ -e $STAY_DIST ]] || die "--stay-dist $STAY_DIST does not exist"
  LEGS+=(session_stay)
fi
has_leg() { local l; for l in "${LEGS[@]}"; do [[ $l == "$1" ]] && return 0; done; return 1; }

lib_require_tools python   # sets PY (python3 with pymysql)
find_sluice_dist
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT="$RESULTS_ROOT/$STAMP-moves"
LIB_WORK=$(mktemp -d "${TMPDIR:-/tmp}/sluice-moves.XXXXXX")
TOKEN=bench-$RANDOM$RANDOM
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
has_leg session_stay && log "session_stay: SESSION pooling on $STAY_DIST (a drain without moves)"

# ---------------------------------------------------------------- servers and data
DB_PORTS=()
for i in 0 1 2; do
  mdb_start "db$i" $((i + 1)) standalone; DB_PORTS+=("$MDB_PORT")
done
log "preparing sbtest on each server: $TABLES tables x $TABLE_SIZE rows"
for i in 0 1 2; do sb_prepare "${DB_PORTS[$i]}" "$TABLES" "$TABLE_SIZE" "$OUT/logs/prepare-db$i.log"; done

# ---------------------------------------------------------------- Sluice, one per leg
declare -A SB_PORT ADMIN_PORT
write_config() {  # write_config LEG FILE ADMIN_PORT
  local leg=$1 f=$2 i
  {
    echo "# generated by benchmark/moves/run.sh, leg $leg"
    echo "databaseName: sbtest"
    echo "dataSources:"
    for i in 0 1 2; do
      printf '  ds_%s:\n    url: jdbc:mysql://%s:%s/sbtest\n    username: root\n    password: ""\n    maxPoolSize: %s\n' \
        "$i" "$HOST" "${DB_PORTS[$i]}" "$(( THREADS * 2 > 100 ? THREADS * 2 : 100 ))"
    done
    echo "rules: []"
    echo "loadBalancer:"
    echo "  type: LEAST_CONNECTIONS"
    echo "pooling:"
    case $leg in
      tx_moves) echo "  mode: TRANSACTION" ;;
      tx_nomoves) printf '  mode: TRANSACTION\n  sessionMovesPerSecond: 0\n' ;;
      session|session_stay) echo "  mode: SESSION" ;;
    esac
    cat <<EOF
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
  port: $3
  token: $TOKEN
EOF
  } >"$f"
}
for leg in "${LEGS[@]}"; do
  free_port 24306; SB_PORT[$leg]=$FREE_PORT
  free_port 25080; ADMIN_PORT[$leg]=$FREE_PORT
  write_config "$leg" "$OUT/sluice-$leg.yaml" "${ADMIN_PORT[$leg]}"
  if [[ $leg == session_stay ]]; then
    (SLUICE_DIST=$STAY_DIST; sluice_start "$leg" "${SB_PORT[$leg]}" "$OUT/sluice-$leg.yaml")
  else
    sluice_start "$leg" "${SB_PORT[$leg]}" "$OUT/sluice-$leg.yaml"
  fi
done

admin_post() {  # admin_post LEG PATH -> the reply; fails loudly on an HTTP error
  curl -sS --fail-with-body -X POST -H "Authorization: Bearer $TOKEN" "http://$HOST:${ADMIN_PORT[$1]}$2" \
    || die "admin API of $1: POST $2 failed"
}
admin_get() { curl -sS -H "Authorization: Bearer $TOKEN" "http://$HOST:${ADMIN_PORT[$1]}$2"; }
now_ms() { date +%s%3N; }

run_sb() {  # run_sb LEG SECONDS LOG -> sysbench's exit code
  local rc=0
  sysbench "$TEST" --db-driver=mysql --mysql-host="$HOST" --mysql-port="${SB_PORT[$1]}" --mysql-user=root \
    --mysql-password= --mysql-db=sbtest --tables="$TABLES" --table-size="$TABLE_SIZE" --threads="$THREADS" \
    --time="$2" --rand-type=uniform --report-interval=1 run >"$3" 2>&1 </dev/null &
  SYSBENCH_PID=$!
  wait "$SYSBENCH_PID" || rc=$?
  SYSBENCH_PID=""
  return "$rc"
}

# one measured run: sysbench in the background, the drain/undrain schedule and the sessions poller in this shell
measure() {  # measure LEG ROUND
  local leg=$1 r=$2 base="$OUT/logs/${1}_r$2" t0 rc=0 drained=0 undrained=0 now
  admin_get "$leg" /metrics | grep -E '^sluice_session_moves(_refused)?_total' >"$base.metrics-before" || true
  : >"$base.sessions"
  t0=$(now_ms)
  sysbench "$TEST" --db-driver=mysql --mysql-host="$HOST" --mysql-port="${SB_PORT[$leg]}" --mysql-user=root \
    --mysql-password= --mysql-db=sbtest --tables="$TABLES" --table-size="$TABLE_SIZE" --threads="$THREADS" \
    --time="$TIME" --rand-type=uniform --report-interval=1 run >"$base.log" 2>&1 </dev/null &
  SYSBENCH_PID=$!
  while kill -0 "$SYSBENCH_PID" 2>/dev/null; do
    now=$(( $(now_ms) - t0 ))
    if (( !drained && now >= DRAIN_AT * 1000 )); then
      admin_post "$leg" "/api/backends/$DRAIN_BACKEND/drain" >"$base.drain.json"
      echo "drain $(( $(now_ms) - t0 ))" >>"$base.events"; drained=1
    fi
    if (( UNDRAIN_AT > 0 && drained && !undrained && now >= UNDRAIN_AT * 1000 )); then
      admin_post "$leg" "/api/backends/$DRAIN_BACKEND/undrain" >"$base.undrain.json"
      echo "undrain $(( $(now_ms) - t0 ))" >>"$base.events"; undrained=1
    fi
    echo "$(( $(now_ms) - t0 )) $(admin_get "$leg" /api/sessions | tr -d '\n')" >>"$base.sessions"
    sleep 0.2
  done
  wait "$SYSBENCH_PID" || rc=$?
  SYSBENCH_PID=""
  admin_get "$leg" /metrics | grep -E '^sluice_session_moves(_refused)?_total' >"$base.metrics-after" || true
  (( undrained )) || admin_post "$leg" "/api/backends/$DRAIN_BACKEND/undrain" >/dev/null   # the next run starts undrained
  echo "exit $rc" >>"$base.events"
  local line
  line=$("$PY" "$SCRIPT_DIR/report.py" --one "$base" "$DRAIN_BACKEND" 2>&1) || line="(parse failed: $line)"
  log "  $leg r=$r $line$([[ $rc != 0 ]] && echo " EXIT=$rc (see logs/${leg}_r$r.log)")"
  [[ $rc == 0 ]] || FAILED=$((FAILED + 1))
  sleep 2   # the drained backend's pool settles; idle sessions of this run are gone
}

FAILED=0
if (( WARMUP > 0 )); then
  for leg in "${LEGS[@]}"; do
    log "warm-up of $leg: $WARMUP s, no drain"
    run_sb "$leg" "$WARMUP" "$LIB_WORK/warmup.log" || { tail -5 "$LIB_WORK/warmup.log" >&2; die "warm-up of $leg failed"; }
  done
fi
log "== $TEST, $THREADS threads, $TIME s runs, drain $DRAIN_BACKEND at ${DRAIN_AT}s, undrain at $( (( UNDRAIN_AT )) && echo "${UNDRAIN_AT}s" || echo never)"
n=${#LEGS[@]}
for ((r = 1; r <= REPEATS; r++)); do
  for ((k = 0; k < n; k++)); do measure "${LEGS[$(( (r - 1 + k) % n ))]}" "$r"; done
done

# ---------------------------------------------------------------- cost of one move
move_cost() {  # move_cost LEG FILE_STEM: move_cost.py through LEG's Sluice
  log "cost of one move ($1): $MOVE_COST drains of the session's backend (no other load)"
  "$PY" "$SCRIPT_DIR/move_cost.py" --port "${SB_PORT[$1]}" --admin "$HOST:${ADMIN_PORT[$1]}" \
    --token "$TOKEN" --moves "$MOVE_COST" --table-size "$TABLE_SIZE" --csv "$OUT/$2.csv" \
    >"$OUT/$2.txt" 2>&1 || { cat "$OUT/$2.txt" >&2; die "move_cost.py through $1 failed (output above)"; }
  sed 's/^/    /' "$OUT/$2.txt" >&2
}
if (( MOVE_COST > 0 )); then
  has_leg tx_moves && move_cost tx_moves move_cost
  has_leg session && move_cost session move_cost_session
else
  log "cost of one move: skipped (--move-cost 0)"
  echo "skipped (--move-cost 0)" >"$OUT/move_cost.txt"
fi

cat >"$OUT/meta.txt" <<EOF
command: benchmark/moves/run.sh $ORIG_ARGS
git: $(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
started_utc: $STAMP
sluice_dist: $SLUICE_DIST${STAY_DIST:+ | session_stay: $STAY_DIST}
legs: ${LEGS[*]} | test: $TEST | threads: $THREADS | time: $TIME s | drain $DRAIN_BACKEND at ${DRAIN_AT}s | undrain at ${UNDRAIN_AT}s (0 = never) | repeats: $REPEATS | warmup: $WARMUP s
tables: $TABLES x $TABLE_SIZE on each of 3 standalone servers (ports ${DB_PORTS[*]}, MariaDB $(sql "${DB_PORTS[0]}" 'SELECT VERSION()'), innodb_buffer_pool_size $MDB_BUFFER_POOL) | workerThreads: $WORKER_THREADS | LEAST_CONNECTIONS
machine: $(nproc) CPUs, $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo), load at end $(cut -d' ' -f1-3 /proc/loadavg)
EOF
"$PY" "$SCRIPT_DIR/report.py" --summary "$OUT" "$DRAIN_BACKEND" || log "report.py failed; raw data in $OUT/logs"
log "summary: $OUT/summary.md"
if (( FAILED > 0 )); then
  log "$FAILED run(s) ended with a sysbench error (see their logs)"
  exit 3
fi
