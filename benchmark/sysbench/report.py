#!/usr/bin/env python3
"""Summarise one benchmark/sysbench/run.sh result folder.

    /usr/bin/python3 benchmark/sysbench/report.py benchmark/results/<timestamp>

Reads results.csv (+ meta.json) and writes, into the same folder:
  results.json  meta, every run, and the per-workload summary
  summary.md    the tables printed to stdout
  ratios.png    QPS ratios per workload (median bar, min..max whisker), if
                matplotlib is importable (Debian: apt-get install python3-matplotlib,
                then run with /usr/bin/python3)

Ratios pair the repeats by index: repeat r of sluice against repeat r of haproxy, etc.
Runs interleave direct -> haproxy -> sluice, so a pair ran under nearly the same
machine conditions; min/median/max over the pairs shows how stable the ratio is.

Workloads c (idle_N) and d (churn_R) get two more tables: per target, QPS with the side
load against QPS of the same target without it (idle_0 / churn_0 of the same round),
proxy RSS, and the server connections the side load made the target open, checked
against the issue's targets for Sluice. skipped.csv (points a target could not reach on
this machine) is listed too.

Transaction pooling (issue #8): target sluice_tx is a second Sluice with pooling TRANSACTION (and
the sluice leg may run with --pooling transaction, column `pooling`). Every run also carries
MariaDB's server connections: server_conns_start / server_conns_max (Threads_connected at the start
and its maximum, sampled about once a second, the sampler's own connection subtracted) and
backend_handshakes (the Connections delta over the run, the harness's own queries subtracted). For a
TRANSACTION leg the report checks that the server connections it added stayed within its maxPoolSize.
"""
import csv
import json
import os
import statistics
import sys

TARGETS = ["direct", "haproxy", "sluice", "sluice_tx", "sluice_capture"]
RATIOS = [("haproxy", "direct"), ("sluice", "direct"), ("sluice", "haproxy"), ("sluice_tx", "haproxy"),
          ("sluice_tx", "sluice"), ("sluice_capture", "sluice")]
NUMERIC = ["threads", "repeat", "time_s", "exit_code", "queries", "qps", "tps", "avg_ms", "p95_ms",
           "errors", "reconnects", "proxy_cpu_s", "proxy_cpu_s_per_kq", "proxy_rss_kb",
           "proxy_rss_max_kb", "db_cpu_s_per_kq", "loadavg1",
           "side_n", "side_ok", "side_failed", "side_dropped", "side_p50_ms", "side_p95_ms", "side_rate",
           "db_new_conns", "db_rss_kb", "max_pool_size", "server_conns_start", "server_conns_max",
           "backend_handshakes", "proxy_backend_conns_max", "proxy_backend_opened", "side_cpu_s", "box_idle_s",
           "qps_churn_on", "qps_churn_off"]
# The targets (workloads c and d), checked for Sluice.
C_RSS_MAX_MIB = 300        # Sluice RSS with 15,000 idle connections, -Xmx512m
C_QPS_RATIO_MIN = 0.98     # point_select QPS with the idle connections / without
D_QPS_RATIO_MIN = 0.98     # point_select QPS with churn / without
B_RSS_RATIO_MAX = 1.2      # proxy RSS during range_10000 / its RSS at rest
D_NEW_CONNS_MAX_SHARE = 0.01  # "no backend handshake per client connection": new server
                              # connections <= 1 % of the churn connections


def num(v):
    if v is None or v == "":
        return None
    try:
        f = float(v)
    except ValueError:
        return None
    return int(f) if f.is_integer() else f


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def label(target, pooling):
    """Target name with its pooling mode for Sluice legs: 'sluice (session)', 'sluice_tx (transaction)'."""
    return f"{target} ({pooling})" if pooling else target


def conns(runs):
    """Server-connection figures of a set of runs (rows): medians, the largest maximum, and for a TRANSACTION
    leg whether the connections it added (max - start) stayed within maxPoolSize in every run."""
    runs = list(runs)
    pooling = next((r.get("pooling") for r in runs if r.get("pooling")), "")
    pool = next((r.get("max_pool_size") for r in runs if r.get("max_pool_size") is not None), None)
    added = [r["server_conns_max"] - r["server_conns_start"] for r in runs
             if r.get("server_conns_max") is not None and r.get("server_conns_start") is not None]
    own = [r["proxy_backend_conns_max"] for r in runs if r.get("proxy_backend_conns_max") is not None]
    # the check: Sluice's own count when its admin API answered (exact), else the server-wide increase
    peak = max(own) if own else max(added, default=None)
    within = None
    if pooling == "transaction" and pool is not None and peak is not None:
        within = peak <= pool
    return {
        "pooling": pooling,
        "max_pool_size": pool,
        "server_conns_start_median": median([r.get("server_conns_start") for r in runs]),
        "server_conns_max_median": median([r.get("server_conns_max") for r in runs]),
        "server_conns_max_max": max([r["server_conns_max"] for r in runs if r.get("server_conns_max") is not None],
                                    default=None),
        "server_conns_added_max": max(added, default=None),
        "backend_handshakes_median": median([r.get("backend_handshakes") for r in runs]),
        "proxy_backend_conns_max_max": max(own, default=None),
        "proxy_backend_opened_median": median([r.get("proxy_backend_opened") for r in runs]),
        "pool_peak": peak,
        "within_pool": within,
    }


def conns_cells(c):
    """'max (start)', handshakes, Sluice's own 'max / opened', and the pool check for a TRANSACTION leg."""
    srv = fmt(c["server_conns_max_max"])
    if c["server_conns_start_median"] is not None:
        srv += f" ({fmt(c['server_conns_start_median'])})"
    own = "-"
    if c["proxy_backend_conns_max_max"] is not None or c["proxy_backend_opened_median"] is not None:
        own = f"{fmt(c['proxy_backend_conns_max_max'])} / {fmt(c['proxy_backend_opened_median'])}"
    check = "-"
    if c["within_pool"] is not None:
        check = f"{mark(c['within_pool'])} {fmt(c['pool_peak'])} ≤ {fmt(c['max_pool_size'])}"
    return [srv, fmt(c["backend_handshakes_median"]), own, check]


def load(folder):
    with open(os.path.join(folder, "results.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k in NUMERIC:
            if k in r:
                r[k] = num(r[k])
    meta = {}
    mp = os.path.join(folder, "meta.json")
    if os.path.exists(mp):
        with open(mp) as f:
            meta = json.load(f)
    skipped = []
    sp = os.path.join(folder, "skipped.csv")
    if os.path.exists(sp):
        with open(sp, newline="") as f:
            skipped = list(csv.DictReader(f))
    rest = {}  # when ("start", "before_range_10000") -> target -> kB
    rp = os.path.join(folder, "rest_rss.csv")
    if os.path.exists(rp):
        with open(rp, newline="") as f:
            for r in csv.DictReader(f):
                if num(r["rss_kb"]):
                    rest.setdefault(r.get("when", "start"), {})[r["target"]] = num(r["rss_kb"])
    meta["rest_rss_kb"] = rest
    return meta, rows, skipped


def b_rss(rows, rest):
    """Workload b's memory target: each proxy's highest RSS while range_10000 ran, against its RSS at rest: at the
    start of the run, and (when other workloads ran first) just before range_10000."""
    out = []
    start, before = rest.get("start", {}), rest.get("before_range_10000", {})
    for t in TARGETS:
        if t not in start and t not in before:
            continue
        peaks = [r["proxy_rss_max_kb"] for r in rows
                 if r["workload"] == "range_10000" and r["target"] == t and r["proxy_rss_max_kb"]]
        if not peaks:
            continue
        peak = max(peaks)
        e = {"target": t, "peak_mib": peak / 1024, "runs": len(peaks)}
        for when, values in (("start", start), ("before", before)):
            if t in values:
                e[f"{when}_mib"] = values[t] / 1024
                e[f"{when}_ratio"] = peak / values[t]
        out.append(e)
    return out


def b_rss_table(entries):
    if not entries:
        return ""

    def cell(e, key, nd):
        return "-" if e.get(key) is None else f"{e[key]:.{nd}f}"

    lines = ["### b: proxy RSS during range_10000 against its RSS at rest",
             "",
             "| target | at rest, start of run MiB | at rest, before range_10000 MiB "
             "| highest during range_10000 MiB | ratio to start | ratio to before "
             f"| Sluice: ≤ {B_RSS_RATIO_MAX} |",
             "|---|---:|---:|---:|---:|---:|---|"]
    for e in entries:
        ratio = e.get("before_ratio", e.get("start_ratio"))
        check = mark(ratio <= B_RSS_RATIO_MAX) if e["target"].startswith("sluice") else ""
        lines.append("| " + " | ".join([e["target"], cell(e, "start_mib", 1), cell(e, "before_mib", 1),
                                         f"{e['peak_mib']:.1f}", cell(e, "start_ratio", 3),
                                         cell(e, "before_ratio", 3), check]) + " |")
    lines.append("")
    lines.append("At rest: VmRSS once, after 3 s idle: at the start of the run (after its first warm-up, before its "
                 "first measured run) and just before range_10000's warm-up. During range_10000: the highest VmRSS "
                 "sampled (about once a second) over its measured runs. The check uses the reading just before "
                 "range_10000 when there is one. The workloads before it grow a JVM's heap (new client and server "
                 "connections every run), which the start reading does not include.")
    return "\n".join(lines)


def sideload(rows, kind):
    """Per (point, target): the side-load columns and the QPS ratio against point 0 of the same
    target and round (repeat). kind: 'idle' (workload c) or 'churn' (workload d)."""
    prefix = kind + "_"
    by = {}  # (n, target) -> repeat -> row
    for r in rows:
        if r["workload"].startswith(prefix) and r.get("side_load") == kind:
            by.setdefault((int(r["workload"][len(prefix):]), r["target"]), {})[r["repeat"]] = r
    out = []
    for (n, t) in sorted(by, key=lambda k: (k[0], TARGETS.index(k[1]) if k[1] in TARGETS else 9)):
        runs = by[(n, t)]
        ok = [r for r in runs.values() if r["exit_code"] == 0 and r["qps"]]
        base = by.get((0, t), {})
        ratios = []
        paired = False
        for rep in sorted(runs):
            x, y = runs[rep], base.get(rep)
            if x["exit_code"] == 0 and x.get("qps_churn_on") and x.get("qps_churn_off"):
                # run.sh --churn-blocks: with and without churn in the same sysbench run
                ratios.append(x["qps_churn_on"] / x["qps_churn_off"])
                paired = True
            elif y and x["exit_code"] == 0 and y["exit_code"] == 0 and x["qps"] and y["qps"]:
                ratios.append(x["qps"] / y["qps"])
        base_ok = [r for r in base.values() if r["exit_code"] == 0 and r["qps"]]
        mib = lambda v: None if v is None else round(v / 1024, 1)
        out.append({
            "kind": kind, "n": n, "target": t, "runs": len(runs),
            "errors": sum((r["errors"] or 0) for r in runs.values()),
            "failed_runs": len(runs) - len(ok),
            "qps_median": median([r["qps"] for r in ok]),
            "p95_ms_median": median([r["p95_ms"] for r in ok]),
            "qps_ratio": ({"min": min(ratios), "median": statistics.median(ratios), "max": max(ratios),
                           "pairs": len(ratios), "within_run": paired} if ratios else None),
            "proxy_rss_mib_median": mib(median([r["proxy_rss_kb"] for r in ok])),
            "proxy_rss_mib_max": mib(max([r["proxy_rss_max_kb"] for r in ok if r["proxy_rss_max_kb"]], default=None)),
            "proxy_rss_mib_base": mib(median([r["proxy_rss_kb"] for r in base_ok])),
            "db_rss_mib_median": mib(median([r.get("db_rss_kb") for r in ok])),
            "side_ok_min": min([r["side_ok"] for r in runs.values() if r.get("side_ok") is not None], default=None),
            "side_ok_sum": sum((r.get("side_ok") or 0) for r in runs.values()),
            "side_failed_sum": sum((r.get("side_failed") or 0) for r in runs.values()),
            "side_dropped_sum": sum((r.get("side_dropped") or 0) for r in runs.values()),
            "side_p50_ms_median": median([r.get("side_p50_ms") for r in runs.values()]),
            "side_p95_ms_median": median([r.get("side_p95_ms") for r in runs.values()]),
            "side_rate_median": median([r.get("side_rate") for r in runs.values()]),
            "db_new_conns_median": median([r.get("db_new_conns") for r in runs.values()]),
            "db_new_conns_sum": sum((r.get("db_new_conns") or 0) for r in runs.values()),
            "loadavg1_median": median([r.get("loadavg1") for r in runs.values()]),
            "side_cpu_s_median": median([r.get("side_cpu_s") for r in runs.values()]),
            "box_idle_s_median": median([r.get("box_idle_s") for r in runs.values()]),
            "time_s": median([r.get("time_s") for r in runs.values()]),
            **conns(runs.values()),
        })
    return out


def client_cpu_cell(g, cpus, blocks):
    """The churn client's CPU seconds and their share of what the cores offered while it ran: run.sh runs it from
    1 s after sysbench starts to 1 s before the end, or for 5 s per block with --churn-blocks."""
    cpu = g.get("side_cpu_s_median")
    if cpu is None:
        return "-"
    within = g["qps_ratio"] and g["qps_ratio"].get("within_run")
    secs = 5 * blocks if within and blocks else (g["time_s"] - 2 if g.get("time_s") else None)
    if not cpus or not secs:
        return fmt(cpu, 2)
    return f"{fmt(cpu, 2)} ({cpu / (cpus * secs):.1%})"


def ratio_cell(r):
    return f"{r['median']:.3f} ({r['min']:.3f}–{r['max']:.3f})" if r else "-"


def mark(ok):
    return "-" if ok is None else ("✓" if ok else "✗")


def side_tables(c_rows, d_rows, skipped, meta):
    lines = []
    c_rows = c_rows if any(g["n"] > 0 for g in c_rows) else []
    d_rows = d_rows if any(g["n"] > 0 for g in d_rows) else []
    if c_rows:
        lines.append("### c: idle connections held open during oltp_point_select")
        lines.append("")
        lines.append("| idle conns | target | connected (min) | QPS | QPS with / without idle (min–max) | p95 ms "
                     "| proxy RSS MiB (max) | proxy RSS MiB, 0 idle | new server conns | MariaDB RSS MiB "
                     f"| Sluice: RSS ≤ {C_RSS_MAX_MIB} MiB, ratio ≥ {C_QPS_RATIO_MIN} "
                     "| server conns max (start) | backend handshakes | Sluice's backend conns max / opened "
                     "| TRANSACTION: peak ≤ maxPoolSize |")
        lines.append("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|")
        for g in c_rows:
            if g["n"] == 0:
                continue
            check = "-"
            if g["target"] in ("sluice", "sluice_tx"):
                rss_ok = None if g["proxy_rss_mib_median"] is None else g["proxy_rss_mib_median"] <= C_RSS_MAX_MIB
                q_ok = None if not g["qps_ratio"] else g["qps_ratio"]["median"] >= C_QPS_RATIO_MIN
                check = f"{mark(rss_ok)} {mark(q_ok)}"
            qps = fmt(g["qps_median"])
            if g["failed_runs"] or g["errors"]:
                qps += f" ⚠ {g['failed_runs']} failed, {g['errors']} err"
            conn = f"{fmt(g['side_ok_min'])} / {g['n']:,}"
            if g["side_failed_sum"] or g["side_dropped_sum"]:
                conn += f" ⚠ {g['side_failed_sum']} failed, {g['side_dropped_sum']} dropped"
            rss = fmt(g["proxy_rss_mib_median"], 1)
            if g["proxy_rss_mib_max"] is not None:
                rss += f" ({fmt(g['proxy_rss_mib_max'], 1)})"
            lines.append("| " + " | ".join([
                f"{g['n']:,}", label(g["target"], g["pooling"]), conn, qps, ratio_cell(g["qps_ratio"]),
                fmt(g["p95_ms_median"], 2), rss, fmt(g["proxy_rss_mib_base"], 1), fmt(g["db_new_conns_median"]),
                fmt(g["db_rss_mib_median"], 1), check] + conns_cells(g)) + " |")
        lines.append("")
        lines.append("The ratio pairs each run with the same target's `idle_0` run of the same round. "
                     "Proxy RSS is VmRSS of the proxy pid, last sample while sysbench ran with the idle "
                     "connections open (max over the run in brackets). New server connections = MariaDB "
                     "`Connections` delta while the idle clients logged in: one per client for direct and "
                     "HAProxy; Sluice binds none for a client that names no schema and sends no command. "
                     f"Sluice's JVM options: `{meta.get('sluice_java_opts', '?')}`; the issue's targets apply "
                     "at 15,000 idle connections with -Xmx512m. "
                     f"Idle clients named schema: `{meta.get('idle_db', 'none')}` (with a schema, a SESSION-mode "
                     "Sluice holds one backend connection per idle client; TRANSACTION mode holds none while idle). "
                     "Server conns max = MariaDB Threads_connected, maximum over the run including the idle "
                     "logins (at its start in brackets); backend handshakes = MariaDB `Connections` delta over "
                     "the same window.")
        lines.append("")
    if d_rows:
        lines.append("### d: connection churn during oltp_point_select")
        lines.append("")
        lines.append("| churn conn/s | target | churn ok / failed | achieved /s | churn p50 / p95 ms | QPS "
                     "| QPS with / without churn (min–max) | churn client CPU s (share of the box) | box idle s "
                     "| p95 ms | new server conns | per churn conn "
                     f"| Sluice: ratio ≥ {D_QPS_RATIO_MIN}, new ≤ {D_NEW_CONNS_MAX_SHARE:.0%} "
                     "| server conns max (start) | backend handshakes (whole run) | Sluice's backend conns max / opened "
                     "| TRANSACTION: peak ≤ maxPoolSize |")
        lines.append("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|")
        cpus = num(meta.get("machine", {}).get("cpus"))
        for g in d_rows:
            if g["n"] == 0:
                continue
            share = (g["db_new_conns_sum"] / g["side_ok_sum"]) if g["side_ok_sum"] else None
            check = "-"
            if g["target"] in ("sluice", "sluice_tx"):
                q_ok = None if not g["qps_ratio"] else g["qps_ratio"]["median"] >= D_QPS_RATIO_MIN
                n_ok = None if share is None else share <= D_NEW_CONNS_MAX_SHARE
                check = f"{mark(q_ok)} {mark(n_ok)}"
            qps = fmt(g["qps_median"])
            if g["failed_runs"] or g["errors"]:
                qps += f" ⚠ {g['failed_runs']} failed, {g['errors']} err"
            lines.append("| " + " | ".join([
                f"{g['n']:,}", label(g["target"], g["pooling"]), f"{g['side_ok_sum']:,} / {g['side_failed_sum']:,}"
                + (" ⚠" if g["side_failed_sum"] else ""),
                fmt(g["side_rate_median"], 1),
                f"{fmt(g['side_p50_ms_median'], 2)} / {fmt(g['side_p95_ms_median'], 2)}", qps,
                ratio_cell(g["qps_ratio"]), client_cpu_cell(g, cpus, num(meta.get("churn_blocks"))),
                fmt(g["box_idle_s_median"], 2),
                fmt(g["p95_ms_median"], 2), fmt(g["db_new_conns_median"]),
                fmt(share, 3) if share is not None else "-", check] + conns_cells(g)) + " |")
        base = [g for g in d_rows if g["n"] == 0]
        if base:
            lines.append("")
            lines.append("Baseline (`churn_0`) new server connections in the same window, per target: "
                         + ", ".join(f"{label(g['target'], g['pooling'])} {fmt(g['db_new_conns_median'])}"
                                     for g in base)
                         + " (other clients of the MariaDB server also count here).")
        if any(g["qps_ratio"] and g["qps_ratio"].get("within_run") for g in d_rows):
            lines.append("")
            lines.append(f"QPS with / without churn is paired within each run (`--churn-blocks "
                         f"{meta.get('churn_blocks', '?')}`): the churn runs in blocks of 5 s, every 10 s from 4 s "
                         "after the start, and the ratio is the mean QPS of the seconds with churn over that of "
                         "the seconds without, from sysbench's 1-s reports (the seconds around each switch "
                         "dropped). QPS is the whole run's, churn and quiet seconds together.")
        lines.append("")
        lines.append("Churn client CPU = user + system seconds of the churn client (`churn.lua` under sysbench) "
                     "over its run, median over the repeats; its share is of the CPU time all cores offered while it "
                     "churned. Box idle = CPU seconds no process used while sysbench ran, all cores together. When "
                     "the box is saturated (idle near 0) the churn client's own share already comes out of the "
                     "measured QPS, whatever the path: with churn, QPS cannot exceed about (1 − that share) × "
                     "the QPS without, before the proxy and the server have spent anything on the churn.")
        lines.append("")
        lines.append("Churn runs from 1 s after sysbench starts to 1 s before it ends, so sysbench's own 16 "
                     "connections are outside the window; new server connections = MariaDB `Connections` "
                     "delta over that window (the harness's own status query subtracted), median over the "
                     "repeats; per churn conn = their sum / successful churn connections. Direct and HAProxy "
                     "open one server connection per churn connection; Sluice should take pooled ones. Churn "
                     "latency = connect + login (with schema sbtest) + `SELECT 1` result. Backend handshakes "
                     "(whole run) also count what sysbench's connections cost at the start: one server connection "
                     "per thread for direct and HAProxy, the pool's growth for Sluice.")
        lines.append("")
    if skipped:
        lines.append("### Points skipped (limits of this machine, not failures)")
        lines.append("")
        for s in skipped:
            lines.append(f"- `{s.get('workload')}` / {s.get('target')}: {s.get('reason')}")
        lines.append("")
    return "\n".join(lines)


def summarise(rows):
    groups = {}  # (workload, threads) -> target -> repeat -> row; keep first-seen order
    for r in rows:
        groups.setdefault((r["workload"], r["threads"]), {}).setdefault(r["target"], {})[r["repeat"]] = r
    out = []
    for (wl, th), by_target in groups.items():
        g = {"workload": wl, "threads": th, "test": next(iter(next(iter(by_target.values())).values()))["test"],
             "targets": {}, "ratios": {}}
        for t in TARGETS:
            runs = by_target.get(t)
            if not runs:
                continue
            ok = [r for r in runs.values() if r["exit_code"] == 0 and r["qps"]]
            g["targets"][t] = {
                "runs": len(runs),
                "failed_runs": len(runs) - len(ok),
                "errors": sum((r["errors"] or 0) for r in runs.values()),
                "qps_median": median([r["qps"] for r in ok]),
                "qps_all": [runs[k]["qps"] for k in sorted(runs)],
                "avg_ms_median": median([r["avg_ms"] for r in ok]),
                "p95_ms_median": median([r["p95_ms"] for r in ok]),
                "proxy_cpu_s_per_kq_median": median([r["proxy_cpu_s_per_kq"] for r in ok]),
                "proxy_rss_mib_median": (lambda m: None if m is None else round(m / 1024, 1))(
                    median([r["proxy_rss_kb"] for r in ok])),
                "db_cpu_s_per_kq_median": median([r["db_cpu_s_per_kq"] for r in ok]),
                "loadavg1_median": median([r.get("loadavg1") for r in runs.values()]),
                **conns(runs.values()),
            }
        for num_t, den_t in RATIOS:
            a, b = by_target.get(num_t), by_target.get(den_t)
            if not a or not b:
                continue
            vals = []
            for rep in sorted(set(a) & set(b)):
                x, y = a[rep], b[rep]
                if x["exit_code"] == 0 and y["exit_code"] == 0 and x["qps"] and y["qps"]:
                    vals.append(x["qps"] / y["qps"])
            if vals:
                g["ratios"][f"{num_t}/{den_t}"] = {"min": min(vals), "median": statistics.median(vals),
                                                   "max": max(vals), "pairs": len(vals)}
        out.append(g)
    return out


def fmt(v, nd=0):
    if v is None:
        return "-"
    return f"{v:,.{nd}f}" if nd else f"{v:,.0f}"


def tables(summary):
    present = [t for t in TARGETS if any(t in g["targets"] for g in summary)]
    ratio_keys = [f"{a}/{b}" for a, b in RATIOS if a in present and b in present]
    lines = []
    head = ["workload", "threads"] + [f"{t} QPS" for t in present] + [f"{k} (min–max)" for k in ratio_keys]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "|".join(["---", "---:"] + ["---:"] * (len(head) - 2)) + "|")
    for g in summary:
        cells = [g["workload"], str(g["threads"])]
        for t in present:
            s = g["targets"].get(t)
            cell = fmt(s["qps_median"]) if s else "-"
            if s and (s["failed_runs"] or s["errors"]):
                cell += f" ⚠ {s['failed_runs']} failed, {s['errors']} err"
            cells.append(cell)
        for k in ratio_keys:
            r = g["ratios"].get(k)
            cells.append(f"{r['median']:.3f} ({r['min']:.3f}–{r['max']:.3f})" if r else "-")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("| workload | threads | target | QPS | avg ms | p95 ms | proxy CPU s / 1k queries "
                 "| proxy RSS MiB | MariaDB CPU s / 1k queries | errors | load1 "
                 "| server conns max (start) | backend handshakes | Sluice's backend conns max / opened "
                     "| TRANSACTION: peak ≤ maxPoolSize |")
    lines.append("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for g in summary:
        for t in present:
            s = g["targets"].get(t)
            if not s:
                continue
            lines.append("| " + " | ".join([
                g["workload"], str(g["threads"]), label(t, s["pooling"]), fmt(s["qps_median"]),
                fmt(s["avg_ms_median"], 2), fmt(s["p95_ms_median"], 2),
                fmt(s["proxy_cpu_s_per_kq_median"], 4), fmt(s["proxy_rss_mib_median"], 1),
                fmt(s["db_cpu_s_per_kq_median"], 4), str(s["errors"]), fmt(s["loadavg1_median"], 1)]
                + conns_cells(s)) + " |")
    lines.append("")
    lines.append("QPS and latencies are medians over the repeats; ratios are QPS ratios of repeats paired "
                 "by index, shown as median (min–max); load1 is the median 1-minute load average at the "
                 "start of the runs (above the 2 cores means other work shared the machine). "
                 "Server conns max = the largest MariaDB Threads_connected over the runs (sampled about once a "
                 "second, the sampler's own connection subtracted; the median at the start of a run in brackets); "
                 "backend handshakes = median delta of MariaDB's `Connections` over a run (connection attempts; "
                 "the harness's own status queries subtracted). Both are server-wide: other clients of MariaDB "
                 "count too. Sluice's backend conns max / opened = the leg's own admin API (GET /api/backends) "
                 "(`sluice_backend_connections`, maximum over the run; `sluice_backend_connections_opened`, delta): "
                 "exact, whatever else uses the server. For a TRANSACTION leg the peak (Sluice's own maximum, or "
                 "without the admin API the increase of server conns over the start) is checked against maxPoolSize.")
    return "\n".join(lines)


def chart(summary, path, title):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(no chart: matplotlib not importable; use /usr/bin/python3 with python3-matplotlib)",
              file=sys.stderr)
        return False
    keys = [f"{a}/{b}" for a, b in RATIOS if any(f"{a}/{b}" in g["ratios"] for g in summary)]
    if not keys:
        return False
    labels = [f"{g['workload']}\n{g['threads']} thr" for g in summary]
    colors = {"haproxy/direct": "#7f7f7f", "sluice/direct": "#1f77b4", "sluice/haproxy": "#ff7f0e",
              "sluice_capture/sluice": "#2ca02c", "sluice_tx/haproxy": "#9467bd", "sluice_tx/sluice": "#8c564b"}
    width = min(0.8 / len(keys), 0.3)
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(summary) + 2), 4.5))
    for i, k in enumerate(keys):
        xs, med, lo, hi = [], [], [], []
        for j, g in enumerate(summary):
            r = g["ratios"].get(k)
            if not r:
                continue
            xs.append(j + width * (i - (len(keys) - 1) / 2))
            med.append(r["median"])
            lo.append(r["median"] - r["min"])
            hi.append(r["max"] - r["median"])
        ax.bar(xs, med, width, yerr=[lo, hi], capsize=3, label=k, color=colors.get(k))
        for x, m in zip(xs, med):
            ax.text(x, 0.02, f"{m:.2f}", ha="center", va="bottom", fontsize=7, rotation=90, color="white")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(summary)))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel("QPS ratio (median, whiskers min–max)")
    ax.set_ylim(0, max(1.15, ax.get_ylim()[1]))
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) == 2 else 2
    folder = argv[1]
    meta, rows, skipped = load(folder)
    if not rows:
        print(f"no runs in {folder}/results.csv", file=sys.stderr)
        return 1
    summary = summarise(rows)
    c_rows, d_rows = sideload(rows, "idle"), sideload(rows, "churn")
    text = tables(summary)
    rss_b = b_rss(rows, meta.get("rest_rss_kb", {}))
    if rss_b:
        text += "\n\n" + b_rss_table(rss_b)
    extra = side_tables(c_rows, d_rows, skipped, meta)
    if extra:
        text += "\n\n" + extra
    with open(os.path.join(folder, "summary.md"), "w") as f:
        f.write(f"# sysbench results {meta.get('started_utc', '')}\n\n")
        if meta:
            f.write(f"`{meta.get('command', '')}` — {meta.get('time_s')} s per run, {meta.get('repeats')} repeats, "
                    f"{meta.get('tables')} tables × {meta.get('table_size')} rows, "
                    f"workerThreads/nbthread {meta.get('worker_threads')}, "
                    f"{meta.get('machine', {}).get('cpus')} CPUs shared by proxy, sysbench and MariaDB.\n\n")
        f.write(text + "\n")
    with open(os.path.join(folder, "results.json"), "w") as f:
        json.dump({"meta": meta, "summary": summary, "b_rss": rss_b, "idle": c_rows, "churn": d_rows, "skipped": skipped,
                   "runs": rows}, f, indent=2)
    title = f"sysbench QPS ratios — {meta.get('started_utc', '')}, {meta.get('time_s', '?')} s × {meta.get('repeats', '?')}"
    made = chart(summary, os.path.join(folder, "ratios.png"), title)
    print(text)
    print(f"\nwrote {folder}/results.json, summary.md" + (", ratios.png" if made else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
