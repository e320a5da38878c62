#!/usr/bin/env python3
"""Hold N idle MySQL client connections open (side load of run.sh workload c).

    /usr/bin/python3 benchmark/sysbench/idle_clients.py --port 13307 --count 15000 --hold-seconds 600

Opens --count TCP connections, at most --concurrency logins at a time, and completes the
MySQL login on each (mysql_native_password, see mysqlwire.py). By default it names NO
database (no CLIENT_CONNECT_WITH_DB): a proxy that binds backend connections lazily then
needs none for these clients. The connections then stay idle (no command is sent) until
SIGTERM/SIGINT or --hold-seconds, when each gets COM_QUIT and is closed.

Output (stdout, one line each, flushed):
  READY connected=X failed=Y open_s=T p50_ms=.. p95_ms=.. errors=...   once all logins are done
  DONE  connected=X failed=Y dropped=Z held_s=T                         at the end
  JSON {...}                                                           the same as one JSON object
dropped = connections the server side closed while they were held.
Exit status: 0 when every connection logged in and none was dropped, 1 otherwise, 2 on bad usage.
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
    p.add_argument("--db", default=None, help="database to name at login (default: none)")
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--concurrency", type=int, default=200, help="logins in flight at once [200]")
    p.add_argument("--connect-timeout", type=float, default=20.0, help="seconds per login [20]")
    p.add_argument("--hold-seconds", type=float, required=True, help="upper bound of the hold time")
    a = p.parse_args(argv)
    if a.count < 0 or a.concurrency < 1 or a.hold_seconds <= 0:
        p.error("--count >= 0, --concurrency >= 1, --hold-seconds > 0")
    return a


def say(line):
    try:
        print(line, flush=True)
    except (BrokenPipeError, ValueError):
        pass  # nobody reads stdout any more; keep closing the connections


async def main(a):
    nofile = mw.raise_nofile()
    if a.count + 50 > nofile:
        say(f"WARN open-files limit {nofile} is below --count {a.count} + 50: expect EMFILE failures")
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)

    conns = []            # (reader, writer)
    errors = collections.Counter()
    latencies = []
    dropped = 0
    next_index = 0

    async def watch(reader):
        # An idle client gets nothing; EOF or an error here means the server side closed it.
        nonlocal dropped
        try:
            data = await reader.read(1)
        except (OSError, asyncio.IncompleteReadError):
            data = b""
        except asyncio.CancelledError:
            return
        if not data:
            dropped += 1

    watchers = []

    async def opener():
        nonlocal next_index
        while next_index < a.count and not stop.is_set():
            next_index += 1
            t0 = time.monotonic()
            try:
                reader, writer = await mw.login(a.host, a.port, a.user, a.password, a.db, a.connect_timeout)
            except mw.MySQLError as e:
                errors[e.short()[:100]] += 1
                continue
            except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, ValueError, IndexError) as e:
                errors[(type(e).__name__ + ": " + str(e))[:100]] += 1
                continue
            latencies.append(time.monotonic() - t0)
            conns.append((reader, writer))
            watchers.append(asyncio.ensure_future(watch(reader)))

    t_open = time.monotonic()
    await asyncio.gather(*(opener() for _ in range(min(a.concurrency, max(1, a.count)))))
    open_s = time.monotonic() - t_open
    failed = a.count - len(conns)
    lat = sorted(latencies)
    p50 = mw.percentile(lat, 50)
    p95 = mw.percentile(lat, 95)
    err_txt = "; ".join(f"{n}x {m}" for m, n in errors.most_common(3)) or "-"
    say(f"READY connected={len(conns)} failed={failed} open_s={open_s:.2f} "
        f"p50_ms={p50 * 1000 if p50 is not None else 0:.2f} p95_ms={p95 * 1000 if p95 is not None else 0:.2f} "
        f"errors={err_txt}")

    t_hold = time.monotonic()
    remaining = max(0.0, a.hold_seconds - (t_hold - t_open))
    if not stop.is_set():
        try:
            await asyncio.wait_for(stop.wait(), remaining)
        except asyncio.TimeoutError:
            say("hold time over")
    held_s = time.monotonic() - t_hold
    dropped_at_stop = dropped
    for w in watchers:
        w.cancel()
    # COM_QUIT + close, bounded in concurrency too
    sem = asyncio.Semaphore(max(a.concurrency, 500))

    async def close_one(writer):
        async with sem:
            await mw.quit_and_close(writer)

    await asyncio.gather(*(close_one(w) for _, w in conns))
    result = {"requested": a.count, "connected": len(conns), "failed": failed, "dropped": dropped_at_stop,
              "open_s": round(open_s, 3), "held_s": round(held_s, 3),
              "open_p50_ms": round(p50 * 1000, 3) if p50 is not None else None,
              "open_p95_ms": round(p95 * 1000, 3) if p95 is not None else None,
              "errors": dict(errors.most_common(5)), "db": a.db}
    say(f"DONE connected={len(conns)} failed={failed} dropped={dropped_at_stop} held_s={held_s:.1f}")
    say("JSON " + json.dumps(result))
    return 0 if failed == 0 and dropped_at_stop == 0 else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse_args(sys.argv[1:]))))
