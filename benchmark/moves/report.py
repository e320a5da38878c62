#!/usr/bin/env python3
"""Reads benchmark/moves/run.sh runs.

  report.py --one logs/LEG_rN DRAINED      one line for the console
  report.py --summary OUT_DIR DRAINED      OUT_DIR/summary.md

A run is logs/LEG_rN.{log (sysbench, 1-s reports), events (drain/undrain ms after start), sessions (ms + the
GET /api/sessions reply, every 0.2 s), metrics-before, metrics-after}.
"""
import json
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

REPORT = re.compile(r"^\[ (\d+)s \] thds: \d+ tps: ([\d.]+) qps: ([\d.]+) .*?lat \(ms,95%\): ([\d.]+) "
                    r"err/s: ([\d.]+) reconn/s: ([\d.]+)")


def seconds(log):
    out = {}
    for line in log.read_text(errors="replace").splitlines():
        m = REPORT.match(line)
        if m:
            out[int(m.group(1))] = dict(qps=float(m.group(3)), p95=float(m.group(4)), err=float(m.group(5)),
                                        reconn=float(m.group(6)))
    return out


def totals(log):
    text = log.read_text(errors="replace")
    g = lambda rx: (re.search(rx, text, re.M) or [None, None])[1]
    return dict(qps=g(r"^ +queries: +\d+ +\(([\d.]+) per sec"), errors=g(r"^ +ignored errors: +(\d+)"),
                reconnects=g(r"^ +reconnects: +(\d+)"), p95=g(r"^ +95th percentile: +([\d.]+)"))


def metrics(path):
    out = defaultdict(float)
    if path.exists():
        for line in path.read_text().splitlines():
            m = re.match(r'^(sluice_session_moves(?:_refused)?_total)\{reason="([^"]+)"\} ([0-9.eE+]+)$', line)
            if m:
                out[("moves" if m.group(1) == "sluice_session_moves_total" else "refused") + ":" + m.group(2)] += float(m.group(3))
    return out


def run(base, drained):
    base = Path(base)
    events = {}
    for line in base.with_suffix(".events").read_text().splitlines():
        k, v = line.split()
        events[k] = int(v)
    secs = seconds(base.with_suffix(".log"))
    tot = totals(base.with_suffix(".log"))
    r = dict(name=base.name, exit=events.get("exit"), **{f"total_{k}": v for k, v in tot.items()})
    d = events.get("drain")
    u = events.get("undrain")
    # second N of sysbench's reports covers (N-1, N]; the drain at d ms falls in report ceil(d/1000)
    ds = -(-d // 1000) if d is not None else None
    us = -(-u // 1000) if u is not None else None
    before = [secs[s]["qps"] for s in secs if ds and s < ds]
    r["base_qps"] = statistics.median(before) if before else None

    def window(start):
        w = [secs[s]["qps"] for s in range(start, start + 5) if s in secs]
        if not w or not r["base_qps"]:
            return None, None
        return min(w), min(w) / r["base_qps"]

    r["drain_s"], r["undrain_s"] = ds, us
    r["drain_min"], r["drain_ratio"] = window(ds) if ds else (None, None)
    r["undrain_min"], r["undrain_ratio"] = window(us) if us else (None, None)
    after = [secs[s]["qps"] for s in secs if us and s > us + 1]
    r["after_undrain_median"] = statistics.median(after) if after else None
    # sessions on the drained backend, polled
    polls = []
    for line in base.with_suffix(".sessions").read_text().splitlines():
        ms, _, js = line.partition(" ")
        try:
            polls.append((int(ms), json.loads(js).get("byBackend", {})))
        except ValueError:
            pass
    at_drain = [p for p in polls if d is not None and p[0] <= d]
    r["sessions_at_drain"] = at_drain[-1][1].get(drained) if at_drain else None
    r["sessions_before"] = at_drain[-1][1] if at_drain else None
    zero = next((p for p in polls if d is not None and p[0] > d and p[1].get(drained, 0) == 0
                 and (u is None or p[0] < u)), None)
    r["left_in_ms"] = zero[0] - d if zero else None
    before_undrain = [p for p in polls if d is not None and p[0] > d and (u is None or p[0] < u)]
    r["sessions_before_undrain"] = before_undrain[-1][1].get(drained) if before_undrain else None
    # the last poll while sysbench's clients were still connected (the very last ones see them gone)
    live = [p for p in polls if sum(v for v in p[1].values() if isinstance(v, (int, float))) > 0]
    r["sessions_end"] = live[-1][1] if live else None
    m0, m1 = metrics(base.with_suffix(".metrics-before")), metrics(base.with_suffix(".metrics-after"))
    r["moves"] = {k: m1[k] - m0.get(k, 0.0) for k in m1 if m1[k] - m0.get(k, 0.0)}
    return r


def fmt(x, spec=".0f"):
    return "-" if x is None else format(x, spec)


def one_line(r):
    moves = ", ".join(f"{k}={v:.0f}" for k, v in sorted(r["moves"].items())) or "none"
    left = (f"left in {r['left_in_ms']} ms" if r["left_in_ms"] is not None
            else f"{fmt(r['sessions_before_undrain'])} still there before the undrain/end")
    return (f"qps={r['total_qps']} p95={r['total_p95']}ms err={r['total_errors']} reconn={r['total_reconnects']} "
            f"| base={fmt(r['base_qps'])} min@drain={fmt(r['drain_min'])} ({fmt(r['drain_ratio'], '.2f')}) "
            f"min@undrain={fmt(r['undrain_min'])} ({fmt(r['undrain_ratio'], '.2f')}) "
            f"| drained backend: {fmt(r['sessions_at_drain'])} sessions, {left}; end {r['sessions_end']} "
            f"| metrics {moves}")


def summary(out, drained):
    out = Path(out)
    runs = [run(p.with_suffix(""), drained) for p in sorted((out / "logs").glob("*_r*.events"))]
    lines = ["# Live session moves benchmark (issue #31)", "", "```", (out / "meta.txt").read_text().strip(), "```", "",
             "Per run: total QPS / p95 / errors / reconnects (sysbench's totals); `base` = median QPS of the 1-s reports",
             "before the drain; `min@drain` = the lowest 1-s QPS in the 5 s from the drain's second (ratio to base);",
             "`min@undrain` the same from the undrain's second; `after` = median QPS from 2 s after the undrain;",
             "sessions on the drained backend when drained, how long until none was left (polled every 0.2 s; `-` =",
             "never before the undrain or the end, then the count left), sessions per backend at the end (last poll with",
             "clients connected), and the",
             "`sluice_session_moves_total` / `..._refused_total` deltas of the run.", "",
             "| run | QPS | p95 ms | errors | reconn | base | min@drain (ratio) | min@undrain (ratio) | after | on drained | left in | at end | moves |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    by_leg = defaultdict(list)
    for r in runs:
        leg = r["name"].rsplit("_r", 1)[0]
        by_leg[leg].append(r)
        left = f"{r['left_in_ms']} ms" if r["left_in_ms"] is not None else f"- ({fmt(r['sessions_before_undrain'])} left)"
        moves = ", ".join(f"{k}={v:.0f}" for k, v in sorted(r["moves"].items())) or "none"
        end = " ".join(f"{k}={v}" for k, v in (r["sessions_end"] or {}).items())
        lines.append(f"| {r['name']} | {r['total_qps']} | {r['total_p95']} | {r['total_errors']} | {r['total_reconnects']} | "
                     f"{fmt(r['base_qps'])} | {fmt(r['drain_min'])} ({fmt(r['drain_ratio'], '.2f')}) | "
                     f"{fmt(r['undrain_min'])} ({fmt(r['undrain_ratio'], '.2f')}) | {fmt(r['after_undrain_median'])} | "
                     f"{fmt(r['sessions_at_drain'])} | {left} | {end} | {moves} |")
    lines += ["", "Per leg, medians over the rounds:", "",
              "| leg | runs | QPS | drain ratio | undrain ratio | left drained backend in (ms) | errors (sum) |",
              "|---|---|---|---|---|---|---|"]
    med = lambda xs: statistics.median(xs) if xs else None
    for leg, rs in by_leg.items():
        lines.append(f"| {leg} | {len(rs)} | {fmt(med([float(r['total_qps']) for r in rs if r['total_qps']]))} | "
                     f"{fmt(med([r['drain_ratio'] for r in rs if r['drain_ratio'] is not None]), '.2f')} | "
                     f"{fmt(med([r['undrain_ratio'] for r in rs if r['undrain_ratio'] is not None]), '.2f')} | "
                     f"{fmt(med([r['left_in_ms'] for r in rs if r['left_in_ms'] is not None]))} | "
                     f"{sum(int(r['total_errors'] or 0) for r in rs)} |")
    if "session_stay" in by_leg:
        lines += ["", "`session_stay` is SESSION pooling on a build without session moves: a drain without moves, where "
                  "the drained backend keeps its sessions until they end; `session` is the same with moves."]
    lines += ["", "Note: in TRANSACTION pooling a drain moves sessions whatever `sessionMovesPerSecond` says (it paces only",
              "the rebalance after an undrain), so tx_moves and tx_nomoves should match around the drain; they differ",
              "after the undrain (tx_nomoves leaves the undrained backend without sessions: see `at end`).", "",
              "## Cost of one move", ""]
    for stem, leg in (("move_cost", "tx_moves"), ("move_cost_session", "session")):
        if (out / f"{stem}.txt").exists():
            lines += [f"{leg}:", "", "```", (out / f"{stem}.txt").read_text().strip(), "```", ""]
    lines += [
              "move_cost.py: one PyMySQL session with state, nothing else running; `moved` = the first statement after",
              "the drain of its backend moved it (includes taking, or opening, a connection on the new backend and",
              "setting the session's state there); `normal` = the same statement with no move since the last one.",
              "Raw samples: `move_cost.csv`. Raw runs: `logs/`.", ""]
    (out / "summary.md").write_text("\n".join(lines))
    print("\n".join(lines[12:12 + len(runs) + 8 + len(by_leg)]))


if __name__ == "__main__":
    if sys.argv[1] == "--one":
        print(one_line(run(sys.argv[2], sys.argv[3])))
    else:
        summary(sys.argv[2], sys.argv[3])
