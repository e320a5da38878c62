#!/usr/bin/env bash
# Runs Sluice's JMH micro benchmarks and keeps the results as JSON.
#
#   benchmark/run-jmh.sh [jmh args]
#
# Builds benchmark/target/benchmarks.jar first if it is missing or older than any source it is built from, then runs
#   java -jar benchmark/target/benchmarks.jar -rf json -rff benchmark/results/jmh/<timestamp>.json [jmh args]
# benchmark/results/ is ignored by git: a lab note keeps the figures it quotes (decision 121).
# Examples:
#   benchmark/run-jmh.sh                                  # everything, with the annotated defaults
#   benchmark/run-jmh.sh ResultRelay -p rows=1000 -prof gc
#   benchmark/run-jmh.sh -f 1 -wi 1 -i 2 -w 2s -r 2s      # a smoke run
# Set JAVA to choose the JVM (default: java on the PATH). Never run two of these at once on a shared machine.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

jar=benchmark/target/benchmarks.jar
if [[ ! -f "$jar" ]] || [[ -n "$(find benchmark/src benchmark/pom.xml proxy-core/src proxy-core/pom.xml proxy-balancer/src pom.xml \
        -newer "$jar" -type f -print -quit)" ]]; then
    echo "building $jar" >&2
    ./mvnw -q -Pbenchmark -pl benchmark -am package -DskipTests
fi

mkdir -p benchmark/results/jmh
out="benchmark/results/jmh/$(date -u +%Y%m%dT%H%M%SZ).json"
echo "results: $out" >&2
"${JAVA:-java}" -jar "$jar" -rf json -rff "$out" "$@"
