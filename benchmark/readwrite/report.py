#!/usr/bin/env python3
"""summary.md of a benchmark/readwrite/run.sh result folder (results.csv, meta.txt, replica-lag.txt, logs/)."""
import csv
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

SERVERS = ["primary", "replica1", "replica2"]


def metrics(path):
    out = {}
    if path.exists():
        for line in path.read_text().splitlines():
            m = re.match(r'^(\S+?)(\{.*\})?\s+([0-9.eE+-]+)$', line)
            if m:
                out[m.group(1) + (m.group(2) or "")] = float(m.group(3))
    return out


def main(folder):
    out = Path(folder)
    rows = list(csv.DictReader((out / "results.csv").open()))
    groups = defaultdict(list)
    for r in rows:
        groups[(r["workload"], int(r["threads"]), r["target"])].append(r)
    lines = ["# Read/write splitting benchmark (issue #28)", ""]
    lines += ["```", (out / "meta.txt").read_text().strip(), "```", ""]
    lines += [
        "Per workload, threads and target, over the rounds: median QPS (min-max), median of the runs' p95 latency,",
        "errors summed, and where the statements ran: each server's share of `Questions` (statements clients sent it:",
        "replicated events are not counted, so this is the split's routing) and of `Com_select`, summed over the",
        "rounds. Causal reads add a `MASTER_GTID_WAIT` (a `Com_select`) on the replica before such reads; the",
        "harness's own `SHOW GLOBAL STATUS` and Sluice's replica watch (a few statements every 2 s per server) count",
        "too and are small next to the load. Writes are not shown per server: MariaDB counts the replicas' applied",
        "row events in `Com_insert`/`Com_update`/`Com_delete` (in results.csv), so they appear on all three.",
        "",
        "| workload | threads | target | runs | QPS median (min-max) | p95 ms (median) | errors | Questions share p / r1 / r2 | SELECT share p / r1 / r2 | causal waits (outcome: n) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (w, th, t), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        qps = [float(r["qps"]) for r in rs if r["qps"]]
        p95 = [float(r["p95_ms"]) for r in rs if r["p95_ms"]]
        err = sum(int(r["errors"] or 0) for r in rs)
        bad = sum(1 for r in rs if r["exit"] != "0")
        q = {s: sum(int(r[f"{s}_questions"]) for r in rs) for s in SERVERS}
        sel = {s: sum(int(r[f"{s}_select"]) for r in rs) for s in SERVERS}

        def share(d):
            tot = sum(d.values())
            return " / ".join(f"{100 * d[s] / tot:.0f}%" if tot else "-" for s in SERVERS)

        waits = defaultdict(float)
        for r in rs:
            base = out / r["log"]
            before = metrics(base.with_suffix(".metrics-before"))
            after = metrics(base.with_suffix(".metrics-after"))
            for k, v in after.items():
                if k.startswith("sluice_readwrite_causal_waits_total"):
                    m = re.search(r'outcome="([^"]+)"', k)
                    waits[m.group(1) if m else k] += v - before.get(k, 0.0)
        wtxt = ", ".join(f"{k}: {v:.0f}" for k, v in sorted(waits.items()) if v) or "-"
        qtxt = f"{statistics.median(qps):.0f} ({min(qps):.0f}-{max(qps):.0f})" if qps else "?"
        lines.append(
            f"| {w} | {th} | {t} | {len(rs)}{f' ({bad} failed)' if bad else ''} | {qtxt} | "
            f"{statistics.median(p95) if p95 else '?'} | {err} | {share(q)} | {share(sel)} | {wtxt} |")
    lines += ["", "## Runs", "", "| workload | threads | round | target | QPS | p95 ms | errors | exit | log |",
              "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['workload']} | {r['threads']} | {r['round']} | {r['target']} | {r['qps']} | "
                     f"{r['p95_ms']} | {r['errors']} | {r['exit']} | [{r['log']}]({r['log']}) |")
    lag = out / "replica-lag.txt"
    if lag.exists():
        lines += ["", "## Replicas at the end", "", "```", lag.read_text().strip(), "```"]
    lines += ["", "Raw: `results.csv` (per-server counter deltas per run), `logs/` (sysbench output, Sluice",
              "`sluice_readwrite_*` metrics before/after each run), `sluice-*.yaml` (the configs).", ""]
    (out / "summary.md").write_text("\n".join(lines))
    print("\n".join(lines[:8 + len(groups) + 10]))


if __name__ == "__main__":
    main(sys.argv[1])
