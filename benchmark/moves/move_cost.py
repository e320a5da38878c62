#!/usr/bin/env python3
"""Cost of one session move (issue #31): one PyMySQL client session through Sluice (pooling TRANSACTION),
with session state (sql_mode, a user variable). Each iteration:

  1. "normal": the point select on the session's current backend, no move since its last statement (the other
     sessions' SELECT 1, a 0.3 s wait, one untimed statement, then an idle pause as long as the last moved
     statement's, come first);
  2. drain the session's backend (admin API), wait until /api/sessions?verbose shows the session on another
     backend (an idle session moves at once), then time the same point select: "moved", the first statement after
     the move (its connection is taken from the new backend's pool, or opened, and the session's state is set on it);
  3. undrain the old backend and wait until it is UP again.

--warm-sessions other idle sessions run SELECT 1 before each iteration, so that the pools hold idle connections;
the move is counted as "new connection" when Sluice's sluice_backend_connections_opened_total grew across it.

Latency = wall time of cursor.execute + fetchall in this client (loopback). Each statement also checks that the
user variable survived (a move that lost state would be counted as a mismatch). Writes CSV rows to --csv and prints
a summary. Nothing else runs against Sluice meanwhile.
"""
import argparse
import csv
import json
import random
import re
import statistics
import sys
import time
import urllib.request

import pymysql


def http(admin, path, token, method="GET"):
    req = urllib.request.Request(f"http://{admin}{path}", method=method,
                                 headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.read().decode()


def my_session(admin, token, local_port):
    data = json.loads(http(admin, "/api/sessions?verbose", token))
    for s in data.get("sessions", []):
        if str(s.get("client", "")).endswith(f":{local_port}"):
            return s
    raise SystemExit(f"session with client port {local_port} not in /api/sessions?verbose: {data}")


def opened_total(admin, token):
    text = http(admin, "/metrics", token)
    return sum(float(m.group(1)) for m in
               re.finditer(r'^sluice_backend_connections_opened_total\{[^}]*\} ([0-9.eE+]+)$', text, re.M))


def backend_status(admin, token, name):
    data = json.loads(http(admin, "/api/backends", token))
    items = data if isinstance(data, list) else data.get("backends", data)
    for b in items:
        if b.get("name") == name:
            return b.get("status")
    return None


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(p / 100 * len(xs) + 0.5) - 1))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--admin", required=True)
    ap.add_argument("--token", required=True)
    ap.add_argument("--moves", type=int, default=200)
    ap.add_argument("--table-size", type=int, default=10000)
    ap.add_argument("--warm-sessions", type=int, default=6,
                    help="other idle sessions that each run SELECT 1 before every iteration, so that the backends'"
                         " pools hold idle connections (as under load); 0 = none: every move then opens a connection")
    ap.add_argument("--csv", required=True)
    a = ap.parse_args()

    conn = pymysql.connect(host="127.0.0.1", port=a.port, user="root", password="", database="sbtest",
                           autocommit=True)
    cur = conn.cursor()
    cur.execute("SET SESSION sql_mode = 'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION'")
    cur.execute("SET @mark = 4242")
    local_port = conn._sock.getsockname()[1]

    def stmt():
        i = random.randint(1, a.table_size)
        t0 = time.perf_counter()
        cur.execute(f"SELECT c, @mark, @@SESSION.sql_mode FROM sbtest1 WHERE id = {i}")
        rows = cur.fetchall()
        dt = (time.perf_counter() - t0) * 1000
        ok = bool(rows) and str(rows[0][1]) == "4242" and rows[0][2].startswith("STRICT_ALL_TABLES")
        return dt, ok

    helpers = [pymysql.connect(host="127.0.0.1", port=a.port, user="root", password="", database="sbtest",
                               autocommit=True) for _ in range(a.warm_sessions)]

    def warm():
        for h in helpers:
            with h.cursor() as c:
                c.execute("SELECT 1")
                c.fetchall()

    for _ in range(20):  # warm this client, the pools and Sluice's paths
        warm()
        stmt()
    rows, mismatches, skipped_normal = [], 0, 0
    moved_idle = 0.03
    last_end = time.perf_counter()
    for n in range(a.moves):
        # 1. normal statement after a pause like the moved one's
        warm()
        time.sleep(0.3)  # a rebalance after the last undrain (every 100 ms) is done
        before = my_session(a.admin, a.token, local_port)
        stmt()  # untimed; then the session idles as long as before the last moved statement
        last_end = time.perf_counter()
        time.sleep(moved_idle)
        idle = time.perf_counter() - last_end
        dt, ok = stmt()
        last_end = time.perf_counter()
        after = my_session(a.admin, a.token, local_port)
        if after["moves"] != before["moves"]:
            skipped_normal += 1  # a rebalance moved it meanwhile: not a "normal" statement
        else:
            rows.append(("normal", n, f"{dt:.3f}", int(ok), "", before["backend"], before["backend"], f"{idle * 1000:.1f}"))
        mismatches += not ok
        # 2. drain its backend, wait for the move, time the first statement after it
        old = after["backend"]
        opened0 = opened_total(a.admin, a.token)
        http(a.admin, f"/api/backends/{old}/drain", a.token, "POST")
        deadline = time.time() + 10
        while True:
            s = my_session(a.admin, a.token, local_port)
            if s["backend"] != old:
                break
            if time.time() > deadline:
                raise SystemExit(f"session did not leave drained backend {old} in 10 s: {s}")
            time.sleep(0.002)
        idle = time.perf_counter() - last_end
        moved_idle = idle
        dt, ok = stmt()
        last_end = time.perf_counter()
        new_conn = opened_total(a.admin, a.token) > opened0
        rows.append(("moved", n, f"{dt:.3f}", int(ok), int(new_conn), old, s["backend"], f"{idle * 1000:.1f}"))
        mismatches += not ok
        # 3. undrain
        http(a.admin, f"/api/backends/{old}/undrain", a.token, "POST")
        deadline = time.time() + 30
        while backend_status(a.admin, a.token, old) != "UP":
            if time.time() > deadline:
                raise SystemExit(f"backend {old} not UP 30 s after undrain")
            time.sleep(0.01)
    conn.close()
    for h in helpers:
        h.close()

    with open(a.csv, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kind", "iteration", "latency_ms", "state_ok", "new_backend_connection", "from", "to", "idle_before_ms"])
        w.writerows(rows)
    normal = [float(r[2]) for r in rows if r[0] == "normal"]
    moved = [float(r[2]) for r in rows if r[0] == "moved"]
    moved_pooled = [float(r[2]) for r in rows if r[0] == "moved" and r[4] == 0]
    moved_new = [float(r[2]) for r in rows if r[0] == "moved" and r[4] == 1]

    def line(name, xs):
        if not xs:
            return f"{name:<44} n=0"
        return f"{name:<44} n={len(xs):<4} median={statistics.median(xs):.3f} ms  p95={pct(xs, 95):.3f} ms  max={max(xs):.3f} ms"

    print(line("normal statement (no move before it)", normal))
    print(line("first statement after a move (all)", moved))
    print(line("  ... its new backend had a pooled connection", moved_pooled))
    print(line("  ... a new backend connection was opened", moved_new))
    for kind in ("normal", "moved"):
        idle = [float(r[7]) for r in rows if r[0] == kind]
        if idle:
            print(f"{kind}: the session had been idle {statistics.median(idle):.0f} ms (median) before the statement")
    print(f"state check (user variable, sql_mode) failed: {mismatches}; normal samples dropped (moved meanwhile): {skipped_normal}")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
