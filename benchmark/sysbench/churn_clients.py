#!/usr/bin/env python3
"""Open and close R MySQL client connections per second (side load of run.sh workload d).

    /usr/bin/python3 benchmark/sysbench/churn_clients.py --port 13307 --rate 300 --seconds 60

Starts one short connection every 1/R seconds (paced on the event loop's clock, with
catch-up if the loop falls behind). Each one logs in with mysql_native_password naming
the database --db (CLIENT_CONNECT_WITH_DB, so Sluice takes a pooled backend connection at
login), sends COM_QUERY `SELECT 1`, reads the result, sends COM_QUIT and closes.
Latency = connect + login + query, until the result is read.

At most --max-inflight connections are in progress; a start that would exceed it is
counted as failed ("overload") so the client stays bounded. Stops early on SIGTERM/SIGINT
(no new starts; in-flight ones finish or time out).

Output (stdout): one summary line and a `JSON {...}` line with attempted, succeeded,
failed, p50_ms, p95_ms, max_ms, achieved_per_s (successes per second of the run), errors.
Exit status: 0 when no connection failed, 1 otherwise, 2 on bad usage.
"""
import argparse
import asyncio
import collections
import json
import signal
import sys
import time

import mysqlwire as mw


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--user", default="root")
    p.add_argument("--password", default="")
    p.add_argument("--db", default="sbtest", help="database named at login [sbtest]")
    p.add_argument("--rate", type=float, required=True, help="connections started per second")
    p.add_argument("--seconds", type=float, required=True)
    p.add_argument("--timeout", type=float, default=10.0, help="seconds per connection [10]")
    p.add_argument("--max-inflight", type=int, default=1000)
    a = p.parse_args(argv)
    if a.rate <= 0 or a.seconds <= 0 or a.max_inflight < 1:
        p.error("--rate, --seconds and --max-inflight must be > 0")
    return a


async def one(a, latencies, errors):
    t0 = time.monotonic()
    writer = None
    try:
        async def run():
            nonlocal writer
            reader, writer = await mw.login(a.host, a.port, a.user, a.password, a.db, a.timeout)
            rows = await mw.query(reader, writer, "SELECT 1")
            if rows != 1:
                raise mw.MySQLError(f"SELECT 1 returned {rows} rows")
        await asyncio.wait_for(run(), a.timeout)
        latencies.append(time.monotonic() - t0)
    except mw.MySQLError as e:
        errors[e.short()[:100]] += 1
    except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, ValueError, IndexError) as e:
        errors[(type(e).__name__ + ": " + str(e))[:100]] += 1
    finally:
        if writer is not None:
            await mw.quit_and_close(writer)


async def main(a):
    mw.raise_nofile()
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    latencies, errors = [], collections.Counter()
    inflight = set()
    total = int(round(a.rate * a.seconds))
    attempted = overload = 0
    t0 = loop.time()
    for i in range(total):
        due = t0 + i / a.rate
        delay = due - loop.time()
        if delay > 0:
            try:
                await asyncio.wait_for(stop.wait(), delay)
            except asyncio.TimeoutError:
                pass
        if stop.is_set():
            break
        attempted += 1
        if len(inflight) >= a.max_inflight:
            overload += 1
            continue
        task = asyncio.ensure_future(one(a, latencies, errors))
        inflight.add(task)
        task.add_done_callback(inflight.discard)
    run_s = max(loop.time() - t0, attempted / a.rate)  # the last start is at (n-1)/rate
    if inflight:
        await asyncio.wait(set(inflight), timeout=a.timeout + 5)
    if overload:
        errors[f"overload: more than {a.max_inflight} in flight"] += overload
    lat = sorted(latencies)
    ms = lambda v: None if v is None else round(v * 1000, 3)
    result = {"rate": a.rate, "seconds": a.seconds, "attempted": attempted, "succeeded": len(lat),
              "failed": attempted - len(lat), "p50_ms": ms(mw.percentile(lat, 50)),
              "p95_ms": ms(mw.percentile(lat, 95)), "max_ms": ms(lat[-1] if lat else None),
              "achieved_per_s": round(len(lat) / run_s, 2) if run_s > 0 else None,
              "errors": dict(errors.most_common(5)), "db": a.db}
    print(f"DONE attempted={attempted} succeeded={len(lat)} failed={attempted - len(lat)} "
          f"p50_ms={result['p50_ms']} p95_ms={result['p95_ms']} achieved_per_s={result['achieved_per_s']}",
          flush=True)
    print("JSON " + json.dumps(result), flush=True)
    return 0 if result["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse_args(sys.argv[1:]))))
