#!/usr/bin/env bash
# The slow fault-injection scenarios of issue #30 (docs/reliability.md, "Fault injection"): a MariaDB of its own in
# a network namespace, reached over a veth pair whose both ends are shaped with tc, behind Sluice beside a server
# on the host; SlowNetworkFaultTest runs a reconnecting ledger load over it, slow, then cut off (a blackhole).
# Needs root (ip netns, tc) and an installed MariaDB (mariadbd, mariadb-install-db).
#
# Shaping: `netem delay $DELAY $JITTER loss $LOSS` when the kernel has sch_netem; else (some VM kernels have no
# netem) a `tbf rate $RATE` bandwidth limit, which the run says it fell back to. SHAPING overrides both, e.g.
#   SHAPING="netem delay 100ms loss 5%" proxy-core/fault-slow-network.sh
set -euo pipefail
cd "$(dirname "$0")/.."

NS=${NS:-sluice-slow}
HOST_DEV=sl-host
NS_DEV=sl-ns
HOST_IP=10.77.0.1
NS_IP=10.77.0.2
PORT=${PORT:-3399}
DELAY=${DELAY:-50ms}
JITTER=${JITTER:-10ms}
LOSS=${LOSS:-1%}
RATE=${RATE:-256kbit}
base=$(mktemp -d /tmp/sluice-slow-net.XXXXXX)
server_pid=

cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
    ip link del "$HOST_DEV" 2>/dev/null || true
    ip netns del "$NS" 2>/dev/null || true
    rm -rf "$base"
}
trap cleanup EXIT

ip netns add "$NS"
ip link add "$HOST_DEV" type veth peer name "$NS_DEV"
ip link set "$NS_DEV" netns "$NS"
ip addr add "$HOST_IP/24" dev "$HOST_DEV"
ip link set "$HOST_DEV" up
ip netns exec "$NS" ip addr add "$NS_IP/24" dev "$NS_DEV"
ip netns exec "$NS" ip link set "$NS_DEV" up
ip netns exec "$NS" ip link set lo up

if [ -z "${SHAPING:-}" ]; then
    if err=$(tc qdisc add dev "$HOST_DEV" root netem delay "$DELAY" "$JITTER" loss "$LOSS" 2>&1); then
        tc qdisc del dev "$HOST_DEV" root
        SHAPING="netem delay $DELAY $JITTER loss $LOSS"
    else
        echo "fault-slow-network: no netem in this kernel ($(uname -r): tc says \"$err\");" \
            "falling back to a bandwidth limit, tbf rate $RATE: no delay or loss of its own" >&2
        SHAPING="tbf rate $RATE burst 4kb latency 400ms"
    fi
fi
# shellcheck disable=SC2086
tc qdisc add dev "$HOST_DEV" root $SHAPING
# shellcheck disable=SC2086
ip netns exec "$NS" tc qdisc add dev "$NS_DEV" root $SHAPING
echo "fault-slow-network: $HOST_IP <-> $NS_IP:$PORT shaped both ways with: $SHAPING"

mariadb-install-db --no-defaults --datadir="$base/data" --auth-root-authentication-method=normal --skip-test-db \
    --user=root > "$base/install.log" 2>&1
cat > "$base/init.sql" <<SQL
CREATE USER IF NOT EXISTS root@'%' IDENTIFIED BY '';
GRANT ALL PRIVILEGES ON *.* TO root@'%' WITH GRANT OPTION;
SQL
ip netns exec "$NS" /usr/sbin/mariadbd --no-defaults --datadir="$base/data" --port="$PORT" --bind-address="$NS_IP" \
    --socket="$base/mysqld.sock" --pid-file="$base/mysqld.pid" --skip-name-resolve --init-file="$base/init.sql" \
    --innodb-buffer-pool-size=16M --max-connections=300 --user=root > "$base/error.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 600); do
    if (exec 3<>"/dev/tcp/$NS_IP/$PORT") 2>/dev/null; then break; fi
    sleep 0.1
done

nice -n 10 ./mvnw -B -o -pl proxy-balancer,proxy-core test -Dtest=SlowNetworkFaultTest \
    -Dsurefire.failIfNoSpecifiedTests=false -Dsluice.faults.slowServer="$NS_IP:$PORT" \
    -Dsluice.faults.netns="$NS" -Dsluice.faults.hostDevice="$HOST_DEV" -Dsluice.faults.nsDevice="$NS_DEV" \
    -Dsluice.faults.shaping="$SHAPING" "$@"
grep -h "fault figures" proxy-core/target/surefire-reports/io.sluice.faults.SlowNetworkFaultTest-output.txt || true
