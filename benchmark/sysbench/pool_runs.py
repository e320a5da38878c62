#!/usr/bin/env python3
"""Pool the paired rounds of several run.sh result folders, per cell, with a confidence interval.

    python3 benchmark/sysbench/pool_runs.py [--a sluice] [--b haproxy] [--workloads a] DIR [DIR ...]

One run of workload a gives 3 to 5 paired rounds per cell, and on the shared 2-core host one round's ratio
moves by 10-20% from the next. Whether a target such as "QPS >= 1.0x HAProxy" is met cannot be read off one
run's median: this script pools the rounds of every folder given (each round paired within its own run,
repeat r of A against repeat r of B, as report.py pairs them) and prints, per workload and thread count:

  rounds       how many paired rounds, and from how many runs
  QPS A/B      median of the per-round ratios, its 95% bootstrap interval, and the share of rounds >= 1.0
  p95 A/B      the same for the per-round p95 latency ratio
  verdict      QPS: "lead" if the interval lies above 1.0, "behind" if below, else "parity";
               p95: "met" if the interval lies below --p95-bound (1.10: HAProxy's + 10%),
               "over" if it lies at or above it, else "open"

Folders of workload d run with --churn-blocks (columns qps_churn_on / qps_churn_off) get a second table: per
target and churn rate, the per-round ratio of QPS with the churn on to QPS with it off, pooled the same way,
against --churn-bound (0.98: issue #3's target), "met" / "missed" / "open" by the same rule.

The interval resamples rounds (10,000 draws, fixed seed, so the output is reproducible). It treats rounds as
independent, which they are not quite: rounds of one run share that hour's host. Pool runs from different
hours to keep that in check, and only runs of the same build and settings (same --time, same targets' config).
Runs with a non-zero sysbench exit code or errors are left out of the pairs.
"""
import argparse
import csv
import os
import random
import statistics
import sys

DRAWS = 10000


def read_rounds(folder, a, b, workloads):
    """{(workload, threads): [(qps_ratio, p95_ratio, folder), ...]} for the rounds where A and B both ran cleanly."""
    path = os.path.join(folder, "results.csv")
    runs = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if workloads and row["workload"] not in workloads:
                continue
            if row["exit_code"] != "0" or (row.get("errors") or "0") not in ("0", ""):
                continue
            try:
                qps, p95 = float(row["qps"]), float(row["p95_ms"])
            except (KeyError, ValueError):
                continue
            runs[(row["workload"], int(row["threads"]), row["repeat"], row["target"])] = (qps, p95)
    cells = {}
    for (workload, threads, repeat, target), (qps, p95) in runs.items():
        if target != a:
            continue
        other = runs.get((workload, threads, repeat, b))
        if other is None or other[0] <= 0 or other[1] <= 0:
            continue
        cells.setdefault((workload, threads), []).append((qps / other[0], p95 / other[1], folder))
    return cells


def read_churn(folder):
    """{(target, rate): [(on/off ratio, folder), ...]} from the rounds of a --churn-blocks run of workload d."""
    cells = {}
    with open(os.path.join(folder, "results.csv"), newline="") as f:
        for row in csv.DictReader(f):
            if not row["workload"].startswith("churn_") or row["exit_code"] != "0":
                continue
            try:
                on, off = float(row.get("qps_churn_on") or ""), float(row.get("qps_churn_off") or "")
            except ValueError:
                continue
            if off > 0:
                cells.setdefault((row["target"], int(row["workload"][6:])), []).append((on / off, folder))
    return cells


def interval(values, rng):
    """95% bootstrap interval of the median."""
    if len(values) < 2:
        return values[0], values[0]
    medians = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(DRAWS))
    return medians[int(0.025 * DRAWS)], medians[int(0.975 * DRAWS) - 1]


def verdict(low, high, bound, above, below, spanning):
    """Where a 95% interval lies against a bound: wholly at or above it, wholly below it, or across it."""
    if low >= bound:
        return above
    if high < bound:
        return below
    return spanning


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folders", nargs="+", help="run.sh result folders (benchmark/results/<timestamp>)")
    parser.add_argument("--a", default="sluice", help="target A, the one compared [sluice]")
    parser.add_argument("--b", default="haproxy", help="target B, the reference [haproxy]")
    parser.add_argument("--workloads", default="point_select,read_only,write_only,read_write",
                        help="comma-separated workload names to pool, or 'all' [workload a's four]")
    parser.add_argument("--p95-bound", type=float, default=1.10, help="p95 ratio the target allows [1.10]")
    parser.add_argument("--churn-bound", type=float, default=0.98,
                        help="workload d: QPS with churn over QPS without that the target asks [0.98]")
    args = parser.parse_args(argv)
    workloads = None if args.workloads == "all" else set(args.workloads.split(","))

    pooled, churn = {}, {}
    for folder in args.folders:
        if not os.path.isfile(os.path.join(folder, "results.csv")):
            sys.exit(f"{folder}: no results.csv")
        for cell, rounds in read_rounds(folder, args.a, args.b, workloads).items():
            pooled.setdefault(cell, []).extend(rounds)
        for cell, rounds in read_churn(folder).items():
            churn.setdefault(cell, []).extend(rounds)
    if not pooled and not churn:
        sys.exit(f"no paired rounds of {args.a} and {args.b}, and no --churn-blocks rounds, in the folders given")
    rng = random.Random(20261124)
    print("Pooled over " + ", ".join(os.path.basename(os.path.normpath(f)) for f in args.folders) + ".")
    if pooled:
        print_pairs(pooled, args, rng)
    if churn:
        print_churn(churn, args, rng)


def print_pairs(pooled, args, rng):
    order = ["point_select", "read_only", "write_only", "read_write"]
    print()
    print(f"{args.a}/{args.b}, rounds paired within each run:")
    print()
    print(f"| workload | threads | rounds (runs) | QPS {args.a}/{args.b}: median [95% interval] | rounds >= 1.0 | QPS verdict "
          f"| p95 {args.a}/{args.b}: median [95% interval] | rounds <= {args.p95_bound:.2f} | p95 verdict |")
    print("|---|---:|---:|---:|---:|---|---:|---:|---|")
    for workload, threads in sorted(pooled, key=lambda c: (order.index(c[0]) if c[0] in order else 99, c[0], c[1])):
        rounds = pooled[(workload, threads)]
        qps = [r[0] for r in rounds]
        p95 = [r[1] for r in rounds]
        q_low, q_high = interval(qps, rng)
        p_low, p_high = interval(p95, rng)
        runs = len({r[2] for r in rounds})
        print(f"| {workload} | {threads} | {len(rounds)} ({runs}) "
              f"| {statistics.median(qps):.3f} [{q_low:.3f}–{q_high:.3f}] "
              f"| {sum(v >= 1.0 for v in qps)}/{len(qps)} | {verdict(q_low, q_high, 1.0, 'lead', 'behind', 'parity')} "
              f"| {statistics.median(p95):.3f} [{p_low:.3f}–{p_high:.3f}] "
              f"| {sum(v <= args.p95_bound for v in p95)}/{len(p95)} | {verdict(p_low, p_high, args.p95_bound, 'over', 'met', 'open')} |")


def print_churn(churn, args, rng):
    print()
    print("Workload d, QPS with the churn on over QPS with it off, per round (--churn-blocks runs):")
    print()
    print(f"| target | churn per s | rounds (runs) | on/off: median [95% interval] | rounds >= {args.churn_bound:.2f} | verdict |")
    print("|---|---:|---:|---:|---:|---|")
    for target, rate in sorted(churn):
        rounds = churn[(target, rate)]
        values = [r[0] for r in rounds]
        low, high = interval(values, rng)
        print(f"| {target} | {rate} | {len(values)} ({len({r[1] for r in rounds})}) "
              f"| {statistics.median(values):.3f} [{low:.3f}–{high:.3f}] "
              f"| {sum(v >= args.churn_bound for v in values)}/{len(values)} | {verdict(low, high, args.churn_bound, 'met', 'missed', 'open')} |")


if __name__ == "__main__":
    main(sys.argv[1:])
