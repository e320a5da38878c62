#!/usr/bin/env bash
#
# Stops the Sluice started by bin/start.sh: SIGTERM, which starts the graceful shutdown (/health answers 503, new
# connections are refused after shutdown.gracefulWaitBeforeShutdownMilliseconds, sessions are closed once idle
# outside a transaction or after shutdown.gracefulCloseTimeoutMilliseconds), then SIGKILL if it is still running
# after SLUICE_STOP_TIMEOUT seconds (default: 30; keep it above the two shutdown timings together).
#
#   bin/stop.sh
#
# Exit status: 0 when Sluice is stopped or was not running, 1 when it could not be killed.

set -u

SLUICE_HOME=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd) || exit 1
PID_FILE=$SLUICE_HOME/sluice.pid
MAIN_CLASS=io.sluice.bootstrap.SluiceMain
STOP_TIMEOUT=${SLUICE_STOP_TIMEOUT:-30}

# True when $1 is a live Sluice process; never signal an unrelated process that reused a stale pid.
is_sluice() {
    local pid=$1
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
    if [ -r "/proc/$pid/stat" ]; then
        [ "$(sed -e 's/^.*) //' "/proc/$pid/stat" | cut -d' ' -f1)" != Z ] || return 1
        grep -qa "$MAIN_CLASS" "/proc/$pid/cmdline" 2>/dev/null || return 1
    fi
    return 0
}

# Waits up to $2 seconds for pid $1 to exit.
wait_for_exit() {
    local pid=$1 deadline=$(( $(date +%s) + $2 ))
    while is_sluice "$pid"; do
        [ "$(date +%s)" -lt "$deadline" ] || return 1
        sleep 0.2
    done
    return 0
}

if [ ! -f "$PID_FILE" ]; then
    echo "Sluice is not running (no $PID_FILE)."
    exit 0
fi
PID=$(cat "$PID_FILE" 2>/dev/null)
if ! is_sluice "$PID"; then
    rm -f "$PID_FILE"
    echo "Sluice is not running (removed the stale $PID_FILE for pid ${PID:-?})."
    exit 0
fi

kill -TERM "$PID" 2>/dev/null
if wait_for_exit "$PID" "$STOP_TIMEOUT"; then
    rm -f "$PID_FILE"
    echo "Sluice stopped (pid $PID)."
    exit 0
fi

echo "sluice: pid $PID still running ${STOP_TIMEOUT} s after SIGTERM; sending SIGKILL" >&2
kill -KILL "$PID" 2>/dev/null
if wait_for_exit "$PID" 10; then
    rm -f "$PID_FILE"
    echo "Sluice killed (pid $PID)."
    exit 0
fi
echo "sluice: pid $PID survived SIGKILL" >&2
exit 1
