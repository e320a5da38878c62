-- Workload digests_N of run.sh (issue #41): point selects of N distinct statement shapes, so that Sluice's digest
-- statistics hold N entries (with statistics.maxDigests >= N). Each shape differs by a column alias, which a digest
-- keeps (literals it folds): SELECT c AS c<k> FROM sbtest<t> WHERE id=<n>, k uniform in 1..N, t = k mod tables + 1.
-- Plain COM_QUERY text, one statement per event, as oltp_point_select with --db-ps-mode=disable.
sysbench.cmdline.options = {
  shapes = {"Distinct statement shapes", 100000},
  tables = {"Number of tables", 1},
  table_size = {"Rows per table", 10000},
}

function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
end

function thread_done()
  con:disconnect()
end

function event()
  local k = sysbench.rand.uniform(1, sysbench.opt.shapes)
  local t = k % sysbench.opt.tables + 1
  local id = sysbench.rand.uniform(1, sysbench.opt.table_size)
  con:query(string.format("SELECT c AS c%d FROM sbtest%d WHERE id=%d", k, t, id))
end
