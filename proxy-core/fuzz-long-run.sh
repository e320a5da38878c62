#!/usr/bin/env bash
# The long fuzz run of issue #30 (docs/reliability.md): every seeded fuzz target of proxy-core, seed after seed,
# until each has run at least TOTAL cases (per pooling mode for the scripted ones). A failure stops the run and
# names its seed and case; replay it with
#   ./mvnw -o -pl proxy-balancer,proxy-core test -Dtest=<Test> -Dsluice.fuzz.seed=<seed> -Dsluice.fuzz.cases=<n>
# Each Maven run stays well inside surefire's 15-minute fork limit: PER_SEED cases, then the next seed.
set -euo pipefail
cd "$(dirname "$0")/.."

TOTAL=${TOTAL:-1000000}
PER_SEED=${PER_SEED:-50000}
FIRST_SEED=${FIRST_SEED:-1000}
TESTS=${TESTS:-CommandFuzzTest,HostileBackendFuzzTest,ResponseTrackerFuzzTest,CaptureReaderFuzzTest}

seed=$FIRST_SEED
done_cases=0
while [ "$done_cases" -lt "$TOTAL" ]; do
    started=$(date +%s)
    ./mvnw -B -q -o -pl proxy-balancer,proxy-core test -Dtest="$TESTS" -Dsurefire.failIfNoSpecifiedTests=false \
        -Dsluice.fuzz.seed="$seed" -Dsluice.fuzz.cases="$PER_SEED" \
        -Djunit.jupiter.execution.timeout.default=14m
    done_cases=$((done_cases + PER_SEED))
    echo "seed $seed: $PER_SEED cases per target passed in $(( $(date +%s) - started )) s ($done_cases of $TOTAL)"
    seed=$((seed + 1))
done
