# PyMySQL for the driver matrix (io.sluice.drivers.DriverMatrixTest). Speaks the line protocol of
# io.sluice.drivers.ScriptedClient on stdin/stdout.
# Usage: python3 pymysql_client.py HOST PORT USER PASSWORD DATABASE SERVER_PREPARE(0|1)
# PyMySQL has no server-side prepared statements: "prepare" keeps the SQL, and "execute" lets PyMySQL quote the
# parameters into it (its only way), so SERVER_PREPARE is ignored.
import sys

try:
    import pymysql
except ImportError as e:
    sys.stderr.write("PyMySQL is missing (apt-get install python3-pymysql): %s\n" % e)
    sys.exit(3)

host, port, user, password, database = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
sessions = {}
statements = {}


def out(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def cell(v):
    if v is None:
        return "\\N"
    if isinstance(v, (bytes, bytearray)):
        v = v.decode("utf-8", "replace")
    return str(v).replace("\t", " ").replace("\n", " ")


def run(conn, sql, params=None):
    with conn.cursor() as cur:
        cur.execute(sql, params)
        if cur.description is not None:
            for row in cur.fetchall():
                out("row\t" + "\t".join(cell(v) for v in row))


out("ready\tPyMySQL %s, Python %s" % (pymysql.__version__, sys.version.split()[0]))
for line in sys.stdin:
    f = line.rstrip("\n").split("\t")
    cmd, sid = f[0], f[1] if len(f) > 1 else ""
    try:
        if cmd == "open":
            # autocommit=True as most applications set it (PyMySQL's own default turns it off at login, and then
            # every statement would open a transaction that only the application's COMMIT ends).
            sessions[sid] = pymysql.connect(host=host, port=port, user=user, password=password, database=database,
                                            autocommit=True)
        elif cmd == "query":
            run(sessions[sid], f[2])
        elif cmd == "prepare":
            statements[sid + "/" + f[2]] = f[3].replace("?", "%s")
        elif cmd == "execute":
            run(sessions[sid], statements[sid + "/" + f[2]], f[3:])
        elif cmd == "close":
            sessions.pop(sid).close()
        else:
            raise ValueError("unknown command " + cmd)
        out("ok")
    except pymysql.err.MySQLError as e:
        code = e.args[0] if e.args and isinstance(e.args[0], int) else 0
        out("error\t%d\t%s" % (code, cell(e.args[1] if len(e.args) > 1 else e)))
