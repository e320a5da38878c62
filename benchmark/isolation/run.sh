#!/usr/bin/env bash
# A long run of the differential isolation test (issue #38, item 3): many interleavings, in chunks of seeds, resumable.
#
#   benchmark/isolation/run.sh [--test CLASS] [--from SEED] [--total N] [--chunk N] [--state DIR] [--until [DATE] HH:MM]
#
# --until: no chunk starts after that time (UTC: HH:MM is today's, "YYYY-MM-DD HH:MM" any day's, for a sitting
# that crosses midnight), so a sitting can stop at a chunk's end and nothing run is lost (a chunk stopped in the
# middle counts for nothing). Likewise a file STATE/stop: no chunk starts while it exists (touch it to end a run
# early at its current chunk's end, remove it before the next run).
#
# Each chunk is one Maven run of the random interleavings of CLASS (default TransactionPoolingIsolationTest; also ReadWriteSplitIsolationTest,
# MovedSessionIsolationTest) with -Dsluice.isolation.seed=START -Dsluice.isolation.interleavings=CHUNK and a time
# budget that keeps it inside Surefire's 15-minute fork limit: the seeds START.. each one interleaving, as many as
# the budget allows (the summary says how many ran; a parameterized class runs each seed once per mode). Each chunk
# is appended to STATE/CLASS-from-FROM.chunks (start, interleavings run, failed, distinct failures, seconds), and
# the next chunk starts after the last seed done: run the script again with the same arguments and it goes on.
# A failing chunk's report (seeds, steps, shrunk sequences) is kept as STATE/CLASS-SEED.txt. Replay one seed:
#   ./mvnw -q -B -pl proxy-core test -Dtest=CLASS -Dsluice.isolation.seed=SEED -Dsluice.isolation.interleavings=1
#
# Needs the shared MariaDB on 127.0.0.1:3306 (the transaction-pooling and moved-session classes) or mariadbd for
# private servers (the read/write split class), and proxy-balancer in ~/.m2 (`-pl proxy-core` takes it from there).
# Ends with one summary line:
#   ISOLATION CLASS seeds FROM..LAST: N interleavings in K chunks, F failed (in C chunks), S s
set -Eeuo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/../.." && pwd)

TEST=TransactionPoolingIsolationTest
FROM=1
TOTAL=1000000
CHUNK=5000
BUDGET=600                # seconds of interleavings per chunk; shrinking a failure comes on top
STATE="$REPO_ROOT/benchmark/results/isolation"
UNTIL=""

while [ $# -gt 0 ]; do
    case "$1" in
        --test) TEST=$2; shift 2 ;;
        --from) FROM=$2; shift 2 ;;
        --total) TOTAL=$2; shift 2 ;;
        --chunk) CHUNK=$2; shift 2 ;;
        --budget) BUDGET=$2; shift 2 ;;
        --state) STATE=$2; shift 2 ;;
        --until) UNTIL=$(date -u -d "$2" +%s); shift 2 ;;
        -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
        *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
done

mkdir -p "$STATE"
DONE="$STATE/$TEST-from-$FROM.chunks"
touch "$DONE"
REPORTS="$REPO_ROOT/proxy-core/target/surefire-reports"
OUTPUT="$REPORTS/io.sluice.isolation.$TEST-output.txt"
END=$((FROM + TOTAL))

while true; do
    start=$(awk -v from="$FROM" '{ done += $2 } END { print from + done }' "$DONE")
    [ "$start" -lt "$END" ] || break
    if [ -n "$UNTIL" ] && [ "$(date +%s)" -ge "$UNTIL" ]; then
        echo "stopped before seed $start: it is past --until"
        break
    fi
    if [ -e "$STATE/stop" ]; then
        echo "stopped before seed $start: $STATE/stop exists"
        break
    fi
    count=$(( END - start < CHUNK ? END - start : CHUNK ))
    rm -f "$OUTPUT" "$REPORTS/io.sluice.isolation.$TEST.txt"
    began=$(date +%s)
    # A chunk with a mismatch fails Maven: that is a result, not an error of the script.
    # The random interleavings only (everySession...): the fixed scenarios are the same in every chunk.
    (cd "$REPO_ROOT" && ./mvnw -q -B -pl proxy-core test -Dtest="$TEST#everySession*" \
        -Dsurefire.failIfNoSpecifiedTests=false \
        -Dsluice.isolation.seed="$start" -Dsluice.isolation.interleavings="$count" \
        -Dsluice.isolation.budgetSeconds="$BUDGET" -Dsluice.isolation.shrinks=1 \
        -Djunit.jupiter.execution.timeout.default=14m >"$STATE/last-maven.log" 2>&1) || true
    summary=$(grep -ah 'ISOLATION-SUMMARY' "$OUTPUT" 2>/dev/null || true)
    if [ -z "$summary" ]; then
        echo "chunk from seed $start: no summary (Maven or the set-up failed: see $STATE/last-maven.log)" >&2
        exit 1
    fi
    # One summary per mode of a parameterized class: the seeds done are those every mode ran.
    ran=$(sed -E 's/.*: ([0-9]+) interleavings from seed.*/\1/' <<<"$summary" | sort -n | head -1)
    failed=$(sed -E 's/.* ([0-9]+) failed,.*/\1/' <<<"$summary" | awk '{ t += $1 } END { print t + 0 }')
    distinct=$(sed -E 's/.* ([0-9]+) distinct.*/\1/' <<<"$summary" | awk '{ t += $1 } END { print t + 0 }')
    if [ "$ran" -eq 0 ]; then
        echo "chunk from seed $start ran no interleaving (see $OUTPUT)" >&2
        exit 1
    fi
    if [ "$failed" -gt 0 ]; then
        cp "$OUTPUT" "$STATE/$TEST-$start.txt"
    fi
    echo "$start $ran $failed $distinct $(( $(date +%s) - began ))" >>"$DONE"
    echo "seeds $start..$((start + ran - 1)): $failed failed, $distinct distinct"
done

awk -v test="$TEST" -v from="$FROM" '
    { n += $2; f += $3; if ($3 > 0) fc++; k++; s += $5 }
    END { printf "ISOLATION %s seeds %d..%d: %d interleavings in %d chunks, %d failed (in %d chunks), %d s\n",
          test, from, from + n - 1, n, k, f, fc, s }' "$DONE"
