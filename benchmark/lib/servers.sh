# shellcheck shell=bash
# Shared by benchmark/readwrite/run.sh and benchmark/moves/run.sh: disposable MariaDB servers (standalone, or a
# GTID primary + replicas, with the server settings of proxy-core's ReplicationGroup / ExtraMariaDb fixtures),
# Sluice started from the distribution, sysbench output parsing. Source it; it defines functions only, plus
# LIB_* bookkeeping that lib_cleanup uses to stop every process these functions started (and only those).
#
# The caller sets: HOST (127.0.0.1), LIB_WORK (a scratch dir), and traps EXIT to lib_cleanup.

LIB_MDB_PIDS=()      # mariadbd pids started here
LIB_MDB_DIRS=()      # their base dirs
LIB_SLUICE_HOMES=()  # unpacked Sluice distributions started here
LIB_SLUICE_PIDS=()
LIB_BG_PIDS=()       # other background helpers (sysbench, pollers) the caller registered
MDB_BUFFER_POOL=${MDB_BUFFER_POOL:-128M}
MDB_MAX_CONNECTIONS=${MDB_MAX_CONNECTIONS:-500}

log()  { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die()  { log "ERROR: $*"; exit 1; }

lib_require_tools() {  # lib_require_tools [python]: fail loudly, never install or skip silently
  local missing=() t
  for t in sysbench /usr/sbin/mariadbd /usr/bin/mariadb-install-db curl ss tar; do
    command -v "$t" >/dev/null 2>&1 || missing+=("$t")
  done
  command -v mariadb >/dev/null 2>&1 || command -v mysql >/dev/null 2>&1 || missing+=("mariadb (client)")
  command -v java >/dev/null 2>&1 || [[ -n ${JAVA_HOME:-} ]] || missing+=("java (JDK 17+, or JAVA_HOME)")
  if [[ ${1:-} == python ]]; then
    PY=/usr/bin/python3
    [[ -x $PY ]] || PY=$(command -v python3 || true)
    if [[ -z $PY ]] || ! "$PY" -c 'import pymysql' 2>/dev/null; then
      missing+=("python3-pymysql (apt-get install python3-pymysql; looked in ${PY:-no python3})")
    fi
  fi
  (( ${#missing[@]} == 0 )) || die "missing: ${missing[*]}"
  MYSQL_BIN=$(command -v mariadb || command -v mysql)
}

stop_pid() {  # stop_pid PID NAME [SECS]: TERM, wait up to SECS (20) s, then KILL; only this pid
  local pid=$1 name=$2 secs=${3:-20} i
  [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < secs * 10; i++)); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  log "$name (pid $pid) did not stop on TERM; sending KILL"
  kill -KILL "$pid" 2>/dev/null || true
}

lib_cleanup() {  # stops what this library started: helpers, Sluice, then the servers
  local p i
  set +e
  for p in "${LIB_BG_PIDS[@]}"; do stop_pid "$p" helper 5; done
  for i in "${!LIB_SLUICE_PIDS[@]}"; do
    stop_pid "${LIB_SLUICE_PIDS[$i]}" "Sluice ${LIB_SLUICE_HOMES[$i]##*/}" 20
  done
  for i in "${!LIB_MDB_PIDS[@]}"; do stop_pid "${LIB_MDB_PIDS[$i]}" "mariadbd ${LIB_MDB_DIRS[$i]##*/}" 60; done
  set -e
}

port_free() { ! (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }
LIB_PORTS_TAKEN=""
free_port() {  # free_port [AFTER] -> FREE_PORT: a port nobody listens on, nor one this run already handed out
  local p=${1:-23306}   # (sets a global rather than printing: $(...) would lose LIB_PORTS_TAKEN)
  while :; do
    p=$((p + 1))
    [[ " $LIB_PORTS_TAKEN " == *" $p "* ]] && continue
    port_free "$p" && { LIB_PORTS_TAKEN+=" $p"; FREE_PORT=$p; return; }
  done
}

sql() {  # sql PORT STATEMENT -> tab-separated rows, no header (root, empty password, TCP)
  local port=$1; shift
  "$MYSQL_BIN" -h "$HOST" -P "$port" -u root --protocol=TCP --connect-timeout=5 -N -B -e "$*"
}

slave_status() {  # slave_status PORT -> SHOW SLAVE STATUS as "  Name: value" lines (empty when not a replica)
  "$MYSQL_BIN" -h "$HOST" -P "$1" -u root --protocol=TCP --connect-timeout=5 -e 'SHOW SLAVE STATUS\G'
}

# ------------------------------------------------------------------------------------------------- MariaDB

# mdb_start NAME SERVER_ID ROLE -> sets MDB_PORT, MDB_PID. ROLE: primary | replica | standalone. Installs a fresh
# datadir under $LIB_WORK/NAME and starts mariadbd on a free port (call it in the script's own shell, not in $(...),
# so that its pid is registered for lib_cleanup).
mdb_start() {
  local name=$1 id=$2 role=$3 base="$LIB_WORK/$1" port
  free_port 23306; port=$FREE_PORT
  mkdir -p "$base/tmp"
  local -a user=()
  [[ $(id -u) == 0 ]] && user=(--user=root)
  /usr/bin/mariadb-install-db --no-defaults --datadir="$base/data" --auth-root-authentication-method=normal \
    --skip-test-db --tmpdir="$base/tmp" "${user[@]}" >"$base/install.log" 2>&1 \
    || { tail -20 "$base/install.log" >&2; die "mariadb-install-db failed for $name"; }
  # root@localhost matches only the socket; we connect over TCP. Not binlogged (a replica's own GTID would stop
  # replication under gtid_strict_mode).
  printf '%s\n' "SET SESSION sql_log_bin = 0;" "CREATE USER IF NOT EXISTS root@'127.0.0.1' IDENTIFIED BY '';" \
    "GRANT ALL PRIVILEGES ON *.* TO root@'127.0.0.1' WITH GRANT OPTION;" >"$base/init.sql"
  local -a args=(--no-defaults --datadir="$base/data" --port="$port" --bind-address="$HOST"
    --socket="$base/mysqld.sock" --pid-file="$base/mysqld.pid" --tmpdir="$base/tmp" --skip-name-resolve
    --init-file="$base/init.sql" --innodb-buffer-pool-size="$MDB_BUFFER_POOL" --max-connections="$MDB_MAX_CONNECTIONS"
    --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci --server-id="$id" "${user[@]}")
  case $role in
    primary|replica)
      args+=(--log-bin=mysql-bin --binlog-format=ROW --gtid-strict-mode=1 --log-slave-updates=1
             --relay-log=relay-bin --slave-net-timeout=5)
      [[ $role == replica ]] && args+=(--read-only=1) ;;
    standalone) ;;
    *) die "mdb_start: role $role" ;;
  esac
  /usr/sbin/mariadbd "${args[@]}" >"$base/error.log" 2>&1 </dev/null &
  local pid=$!
  LIB_MDB_PIDS+=("$pid"); LIB_MDB_DIRS+=("$base")
  local i
  for ((i = 0; i < 600; i++)); do
    sql "$port" 'SELECT 1' >/dev/null 2>&1 && break
    kill -0 "$pid" 2>/dev/null || { tail -20 "$base/error.log" >&2; die "mariadbd $name exited at start"; }
    sleep 0.1
  done
  (( i < 600 )) || { tail -20 "$base/error.log" >&2; die "mariadbd $name not answering on $port after 60 s"; }
  MDB_PORT=$port MDB_PID=$pid
  log "MariaDB $name ($role, server_id $id) up on $HOST:$port, pid $pid, datadir $base/data"
}

# mdb_replicate PRIMARY_PORT REPLICA_PORT: as ReplicationGroup.connectReplicas, then waits until both threads run
mdb_replicate() {
  local pport=$1 rport=$2 i st
  sql "$rport" "STOP SLAVE; RESET SLAVE ALL; RESET MASTER; SET GLOBAL gtid_slave_pos = '';
    CHANGE MASTER TO MASTER_HOST = '$HOST', MASTER_PORT = $pport, MASTER_USER = 'root', MASTER_PASSWORD = '',
      MASTER_CONNECT_RETRY = 1, MASTER_HEARTBEAT_PERIOD = 1, MASTER_USE_GTID = slave_pos,
      MASTER_SSL_VERIFY_SERVER_CERT = 0;
    START SLAVE" >/dev/null
  for ((i = 0; i < 600; i++)); do
    st=$(slave_status "$rport" | awk '/Slave_IO_Running:|Slave_SQL_Running:/ {print $2}' | tr '\n' ' ')
    [[ $st == "Yes Yes " ]] && { log "replica on $rport replicates from $pport (MASTER_USE_GTID=slave_pos)"; return; }
    sleep 0.1
  done
  die "replica on $rport not replicating after 60 s: $(slave_status "$rport" | grep -E 'Running|Error' | tr -s ' ' | tr '\n' ';')"
}

# mdb_group PRIMARY_NAME REPLICAS -> sets GROUP_PORTS=(primary replica1 ...): a primary + N GTID replicas
mdb_group() {
  local name=$1 n=$2 i
  GROUP_PORTS=()
  mdb_start "$name-primary" 1 primary; GROUP_PORTS+=("$MDB_PORT")
  for ((i = 1; i <= n; i++)); do mdb_start "$name-replica$i" $((i + 1)) replica; GROUP_PORTS+=("$MDB_PORT"); done
  sql "${GROUP_PORTS[0]}" 'RESET MASTER'
  for ((i = 1; i <= n; i++)); do mdb_replicate "${GROUP_PORTS[0]}" "${GROUP_PORTS[$i]}"; done
}

mdb_wait_caught_up() {  # mdb_wait_caught_up PRIMARY_PORT REPLICA_PORT...: MASTER_GTID_WAIT of the primary's position
  local pport=$1 pos r res; shift
  pos=$(sql "$pport" 'SELECT @@GLOBAL.gtid_binlog_pos')
  [[ -n $pos ]] || return 0
  for r in "$@"; do
    res=$(sql "$r" "SELECT MASTER_GTID_WAIT('$pos', 120)")
    [[ $res == 0 ]] || die "replica on $r did not apply $pos within 120 s (MASTER_GTID_WAIT: $res)"
  done
}

mdb_lag() {  # mdb_lag REPLICA_PORT -> "Seconds_Behind_Master=N io=Yes sql=Yes gtid_slave_pos=..."
  local st
  st=$(slave_status "$1" | awk '/Seconds_Behind_Master:/ {s=$2} /Slave_IO_Running:/ {io=$2} /Slave_SQL_Running:/ {q=$2}
    END {printf "Seconds_Behind_Master=%s io=%s sql=%s", s, io, q}')
  echo "$st gtid_slave_pos=$(sql "$1" 'SELECT @@GLOBAL.gtid_slave_pos')"
}

# mdb_counters PORT -> "questions select insert update delete" (SHOW GLOBAL STATUS; our own reads count in
# Questions and Com_select too, the same few per run on each server: read before and after, take the delta)
mdb_counters() {
  sql "$1" "SHOW GLOBAL STATUS WHERE Variable_name IN ('Questions','Com_select','Com_insert','Com_update','Com_delete')" |
    awk '{v[$1]=$2} END {printf "%s %s %s %s %s\n", v["Questions"], v["Com_select"], v["Com_insert"], v["Com_update"], v["Com_delete"]}'
}

# sb_prepare PORT TABLES SIZE LOGFILE: the sbtest schema and sysbench's tables
sb_prepare() {
  local port=$1 tables=$2 size=$3 logf=$4
  sql "$port" 'CREATE DATABASE IF NOT EXISTS sbtest'
  sysbench oltp_common --db-driver=mysql --mysql-host="$HOST" --mysql-port="$port" --mysql-user=root \
    --mysql-password= --mysql-db=sbtest --tables="$tables" --table-size="$size" \
    --threads="$(( tables < 4 ? tables : 4 ))" prepare >"$logf" 2>&1 \
    || { tail -20 "$logf" >&2; die "sysbench prepare on $port failed (see $logf)"; }
}

# ------------------------------------------------------------------------------------------------- Sluice

find_sluice_dist() {  # sets SLUICE_DIST (from --sluice-dist, or distribution/target/sluice-*.tar.gz)
  if [[ -n ${SLUICE_DIST:-} ]]; then
    [[ -e $SLUICE_DIST ]] || die "--sluice-dist $SLUICE_DIST does not exist"
    return
  fi
  local c
  for c in "$REPO_ROOT"/distribution/target/sluice-*.tar.gz; do
    [[ -f $c ]] && { SLUICE_DIST=$c; return; }
  done
  die "no Sluice distribution: build it (./mvnw -B -Pbenchmark -DskipTests package -> distribution/target/sluice-*.tar.gz) or pass --sluice-dist PATH"
}

# sluice_start NAME PORT CONFIG_FILE: unpacks the distribution into $LIB_WORK/sluice-NAME, installs the config and
# runs bin/start.sh (background mode: it waits until Sluice listens and writes sluice.pid). Sets SLUICE_PID.
sluice_start() {
  local name=$1 port=$2 cfg=$3 unpack="$LIB_WORK/sluice-$1" start home
  find_sluice_dist
  mkdir -p "$unpack"
  if [[ -d $SLUICE_DIST ]]; then cp -a "$SLUICE_DIST/." "$unpack/"; else tar -xzf "$SLUICE_DIST" -C "$unpack"; fi
  start=$(find "$unpack" -maxdepth 3 -path '*/bin/start.sh' | head -1)
  [[ -n $start ]] || die "no bin/start.sh in $SLUICE_DIST"
  home=$(cd "$(dirname "$start")/.." && pwd)
  cp "$cfg" "$home/conf/config.yaml"
  LIB_SLUICE_HOMES+=("$home")
  if ! (cd "$home" && ${SLUICE_JAVA_OPTS:+env JAVA_OPTS="$SLUICE_JAVA_OPTS"} bin/start.sh "$port" "$home/conf") \
      >"$LIB_WORK/sluice-$name-start.log" 2>&1 </dev/null; then
    [[ -f $home/sluice.pid ]] && LIB_SLUICE_PIDS+=("$(cat "$home/sluice.pid")")
    tail -30 "$LIB_WORK/sluice-$name-start.log" "$home/logs/stdout.log" "$home/logs/sluice.log" >&2 2>/dev/null
    die "Sluice $name did not start on port $port (config: $cfg)"
  fi
  SLUICE_PID=$(cat "$home/sluice.pid")
  LIB_SLUICE_PIDS+=("$SLUICE_PID")
  local i
  for ((i = 0; i < 300; i++)); do sql "$port" 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.1; done
  (( i < 300 )) || die "Sluice $name listens on $port but does not answer SELECT 1 (log: $home/logs/sluice.log)"
  log "Sluice $name up on $HOST:$port, pid $SLUICE_PID (home $home)"
}

# ------------------------------------------------------------------------------------------------- sysbench

# sb_parse LOG -> "qps p95_ms errors reconnects tps" (blank fields when missing)
sb_parse() {
  awk '
    /^ +transactions:/  { tps = $3; gsub(/[(]/, "", tps) }
    /^ +queries:/       { qps = $3; gsub(/[(]/, "", qps) }
    /^ +ignored errors:/{ err = $3 }
    /^ +reconnects:/    { rec = $2 }
    /^Latency/          { lat = 1 }
    lat && /^ +95th percentile:/ { p95 = $3 }
    END { printf "%s %s %s %s %s\n", qps, p95, err, rec, tps }
  ' "$1"
}
