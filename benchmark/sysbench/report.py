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
"""
import csv
import json
import os
import statistics
import sys

TARGETS = ["direct", "haproxy", "sluice"]
RATIOS = [("haproxy", "direct"), ("sluice", "direct"), ("sluice", "haproxy")]
NUMERIC = ["threads", "repeat", "time_s", "exit_code", "queries", "qps", "tps", "avg_ms", "p95_ms",
           "errors", "reconnects", "proxy_cpu_s", "proxy_cpu_s_per_kq", "proxy_rss_kb",
           "proxy_rss_max_kb", "db_cpu_s_per_kq", "loadavg1"]


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
    return meta, rows


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
                 "| proxy RSS MiB | MariaDB CPU s / 1k queries | errors | load1 |")
    lines.append("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for g in summary:
        for t in present:
            s = g["targets"].get(t)
            if not s:
                continue
            lines.append("| " + " | ".join([
                g["workload"], str(g["threads"]), t, fmt(s["qps_median"]),
                fmt(s["avg_ms_median"], 2), fmt(s["p95_ms_median"], 2),
                fmt(s["proxy_cpu_s_per_kq_median"], 4), fmt(s["proxy_rss_mib_median"], 1),
                fmt(s["db_cpu_s_per_kq_median"], 4), str(s["errors"]), fmt(s["loadavg1_median"], 1)]) + " |")
    lines.append("")
    lines.append("QPS and latencies are medians over the repeats; ratios are QPS ratios of repeats paired "
                 "by index, shown as median (min–max); load1 is the median 1-minute load average at the "
                 "start of the runs (above the 2 cores means other work shared the machine).")
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
    colors = {"haproxy/direct": "#7f7f7f", "sluice/direct": "#1f77b4", "sluice/haproxy": "#ff7f0e"}
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
    meta, rows = load(folder)
    if not rows:
        print(f"no runs in {folder}/results.csv", file=sys.stderr)
        return 1
    summary = summarise(rows)
    text = tables(summary)
    with open(os.path.join(folder, "summary.md"), "w") as f:
        f.write(f"# sysbench results {meta.get('started_utc', '')}\n\n")
        if meta:
            f.write(f"`{meta.get('command', '')}` — {meta.get('time_s')} s per run, {meta.get('repeats')} repeats, "
                    f"{meta.get('tables')} tables × {meta.get('table_size')} rows, "
                    f"workerThreads/nbthread {meta.get('worker_threads')}, "
                    f"{meta.get('machine', {}).get('cpus')} CPUs shared by proxy, sysbench and MariaDB.\n\n")
        f.write(text + "\n")
    with open(os.path.join(folder, "results.json"), "w") as f:
        json.dump({"meta": meta, "summary": summary, "runs": rows}, f, indent=2)
    title = f"sysbench QPS ratios — {meta.get('started_utc', '')}, {meta.get('time_s', '?')} s × {meta.get('repeats', '?')}"
    made = chart(summary, os.path.join(folder, "ratios.png"), title)
    print(text)
    print(f"\nwrote {folder}/results.json, summary.md" + (", ratios.png" if made else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
