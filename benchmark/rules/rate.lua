-- benchmark/rules/rate.sh: each thread sends a point select of sbtest1 as fast as it is answered (or refused).
function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
end

function thread_done()
  con:disconnect()
end

function event()
  con:query(string.format("SELECT c FROM sbtest1 WHERE id=%d", sysbench.rand.uniform(1, 10000)))
end
