#!/usr/bin/env sysbench
-- Side load of run.sh workload d: short client connections at a fixed rate, through sysbench's own client
-- (libmariadb), so that each one logs in exactly as sysbench's main connections do.
--
--   sysbench benchmark/sysbench/churn.lua --mysql-host=127.0.0.1 --mysql-port=13307 --mysql-user=root \
--     --mysql-db=sbtest --threads=16 --rate=300 --time=60 run
--
-- Each event: connect and log in naming the database --mysql-db (so Sluice takes a pooled backend connection at
-- login), COM_QUERY `SELECT 1`, read the result, COM_QUIT, close. sysbench's --rate starts events at that average
-- rate (arrivals queue while all --threads are busy, so a stall is caught up, bounded by the thread count).
-- Latency = connect + login + query, measured here (sysbench's own latency would include the queue wait).
--
-- Why not a Python client: a Python handshake costs about 570 us of CPU per connection here, sysbench's about
-- 180 us. The clients share the 2 cores with the proxy and MariaDB, so the client's own cost was a large part of
-- the QPS that workload d lost (docs/benchmarks/2026-11-23-churn-client-and-resets.md, 05:49).
--
-- With --blocks=N (run.sh --churn-blocks N) the churn is on only in N blocks of 5 s, the first 3 s after this
-- client starts and then every 10 s; events that fall outside a block do nothing. One client process serves
-- every block, so its start-up is paid once, outside them.
--
-- Output, one line per worker thread when it ends (run.sh's report merges them):
--   CHURN ok=N failed=M
--   CHURNLAT us,us,...        latencies of the successful connections, in microseconds
--   CHURNERR message          one line per distinct error message, with its count: CHURNERR count message

local ffi = require("ffi")
ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } churn_timespec;
int clock_gettime(int clk_id, churn_timespec *tp);
]]
local CLOCK_MONOTONIC = 1
local ts = ffi.new("churn_timespec")

local function micros()
  ffi.C.clock_gettime(CLOCK_MONOTONIC, ts)
  return tonumber(ts.tv_sec) * 1000000 + tonumber(ts.tv_nsec) / 1000
end

sysbench.cmdline.options = {
  blocks = {"0 = churn all the time; N = only in N blocks of 5 s, from 3 s after the start and every 10 s", 0},
}

local driver, ok, failed, latencies, errors, started

function thread_init()
  driver = sysbench.sql.driver()
  ok, failed, latencies, errors = 0, 0, {}, {}
  started = micros()
end

-- Whether the churn is on now: always without --blocks; inside one of the blocks with it.
local function churning()
  local blocks = sysbench.opt.blocks
  if blocks == 0 then
    return true
  end
  local t = (micros() - started) / 1000000 - 3
  return t >= 0 and t < 10 * blocks and t % 10 < 5
end

local function one()
  local con = driver:connect()
  local done, err = pcall(con.query, con, "SELECT 1")
  con:disconnect() -- also after a failed query: the connection is not left open
  if not done then
    error(err, 0)
  end
end

function event()
  if not churning() then
    return
  end
  local t0 = micros()
  local done, err = pcall(one)
  if done then
    ok = ok + 1
    latencies[ok] = math.floor(micros() - t0 + 0.5)
  else
    failed = failed + 1
    local message = tostring(type(err) == "table" and (err.message or err.errcode) or err)
    message = message:gsub("^[^:]*:%d+: ", "") -- drop the script position Lua puts in front
    errors[message] = (errors[message] or 0) + 1
  end
end

-- One io.write per line: a single write to the shared stdout, which other threads cannot split (print writes the
-- text and its newline separately, and lines of different threads ran together).
local function line(text)
  io.write(text .. "\n")
end

function thread_done()
  line(string.format("CHURN ok=%d failed=%d", ok, failed))
  for i = 1, #latencies, 500 do
    line("CHURNLAT " .. table.concat(latencies, ",", i, math.min(i + 499, #latencies)))
  end
  for message, count in pairs(errors) do
    line(string.format("CHURNERR %d %s", count, message))
  end
  io.stdout:flush()
end
