#!/usr/bin/env python3
"""Traffic capture overhead (issue #7): sluice_capture against sluice in one run of run.sh --capture.

Reads results.csv (average QPS per run) and the per-run sysbench logs (interval lines "[ 10s ] ... qps: N",
written with --report-interval=10) and logs/*.capture.json (the capture's final status), and writes capture.md, and
appends the same table to summary.md: per workload and thread count, the mean of the runs' average QPS and the
minimum 10-second QPS over all runs, for Sluice with and without a capture, their ratios against the issue's targets
(>= 0.98 average, >= 0.95 minimum), and the records captured and dropped.
"""
import csv
import json
import os
import re
import statistics
import sys

INTERVAL = re.compile(r"^\[ *(\d+)s \].*?qps: ([0-9.]+)")
TARGET_AVG = 0.98
TARGET_MIN = 0.95


def interval_qps(path):
    values = []
    try:
        with open(path) as f:
            for line in f:
                m = INTERVAL.match(line)
                if m:
                    values.append(float(m.group(2)))
    except OSError:
        pass
    return values


def main(out):
    rows = list(csv.DictReader(open(os.path.join(out, "results.csv"))))
    groups = {}
    for r in rows:
        if r["target"] not in ("sluice", "sluice_capture") or r["exit_code"] != "0" or not r["qps"]:
            continue
        g = groups.setdefault((r["workload"], int(r["threads"])), {"sluice": [], "sluice_capture": []})
        g[r["target"]].append(r)
    lines = ["# Traffic capture overhead", "",
             "Sluice with a capture running (compressed: zstd since 2026-11-23, gzip before; the default queue) "
             "against the same Sluice without, runs",
             "interleaved. Average: mean of the runs' QPS. Minimum: the lowest 10-second interval over all runs.",
             f"Targets (issue #7): average >= {TARGET_AVG}x, minimum >= {TARGET_MIN}x.", "",
             "| workload | threads | avg QPS off | avg QPS on | ratio | min 10 s QPS off | min 10 s QPS on | ratio |"
             " records | dropped | verdict |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for (w, th), g in sorted(groups.items()):
        if not g["sluice"] or not g["sluice_capture"]:
            continue
        avg = {t: statistics.mean(float(r["qps"]) for r in g[t]) for t in g}
        mins = {}
        for t in g:
            values = [v for r in g[t] for v in interval_qps(os.path.join(out, r["log"]))]
            mins[t] = min(values) if values else None
        records = dropped = 0
        for r in g["sluice_capture"]:
            status_file = os.path.join(out, "logs", f"{w}_t{th}_r{r['repeat']}.capture.json")
            try:
                status = json.load(open(status_file))
                records += status.get("records", 0)
                dropped += status.get("dropped", 0)
            except (OSError, ValueError):
                pass
        ratio_avg = avg["sluice_capture"] / avg["sluice"]
        ratio_min = mins["sluice_capture"] / mins["sluice"] if mins["sluice"] and mins["sluice_capture"] else None
        ok = ratio_avg >= TARGET_AVG and ratio_min is not None and ratio_min >= TARGET_MIN
        fmt = lambda v: "?" if v is None else f"{v:.0f}"
        lines.append(f"| {w} | {th} | {avg['sluice']:.0f} | {avg['sluice_capture']:.0f} | {ratio_avg:.3f} | "
                     f"{fmt(mins['sluice'])} | {fmt(mins['sluice_capture'])} | "
                     f"{'?' if ratio_min is None else f'{ratio_min:.3f}'} | {records} | {dropped} | "
                     f"{'meets' if ok else 'misses'} |")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "capture.md"), "w") as f:
        f.write(text)
    # The run's summary.md (report.py's) gets the table too: it is the one file of a run kept in git (decision 121).
    with open(os.path.join(out, "summary.md"), "a") as f:
        f.write("\n#" + text)
    print(text)


if __name__ == "__main__":
    main(sys.argv[1])
