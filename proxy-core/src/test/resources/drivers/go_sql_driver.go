// Go's database/sql with go-sql-driver/mysql for the driver matrix (io.sluice.drivers.DriverMatrixTest). Speaks the
// line protocol of io.sluice.drivers.ScriptedClient on stdin/stdout.
//
// Built in GOPATH mode against Debian's golang-github-go-sql-driver-mysql-dev, with no module download:
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go build -o go_sql_driver go_sql_driver.go
//
// Usage: go_sql_driver HOST PORT USER PASSWORD DATABASE SERVER_PREPARE(0|1)
// Each session is one *sql.Conn, so that its statements stay on one client connection as a session's do. A
// prepared statement is always server-side (the driver only quotes parameters itself with interpolateParams=true),
// so SERVER_PREPARE is ignored.
package main

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/go-sql-driver/mysql"
)

var out = bufio.NewWriter(os.Stdout)

func line(format string, args ...interface{}) {
	fmt.Fprintf(out, format+"\n", args...)
}

func cell(v sql.NullString) string {
	if !v.Valid {
		return `\N`
	}
	return strings.NewReplacer("\t", " ", "\n", " ").Replace(v.String)
}

func fail(err error) {
	var my *mysql.MySQLError
	if errors.As(err, &my) {
		line("error\t%d\t%s", my.Number, strings.ReplaceAll(my.Message, "\n", " "))
		return
	}
	line("error\t0\t%s", strings.ReplaceAll(err.Error(), "\n", " "))
}

func rows(r *sql.Rows) error {
	defer r.Close()
	columns, err := r.Columns()
	if err != nil {
		return err
	}
	for r.Next() {
		values := make([]sql.NullString, len(columns))
		targets := make([]interface{}, len(columns))
		for i := range values {
			targets[i] = &values[i]
		}
		if err := r.Scan(targets...); err != nil {
			return err
		}
		cells := make([]string, len(values))
		for i, v := range values {
			cells[i] = cell(v)
		}
		line("row\t%s", strings.Join(cells, "\t"))
	}
	return r.Err()
}

func main() {
	host, port, user, password, database := os.Args[1], os.Args[2], os.Args[3], os.Args[4], os.Args[5]
	db, err := sql.Open("mysql", fmt.Sprintf("%s:%s@tcp(%s:%s)/%s", user, password, host, port, database))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer db.Close()
	db.SetMaxIdleConns(1000) // a closed session's connection stays open, idle in database/sql's pool
	ctx := context.Background()
	sessions := map[string]*sql.Conn{}
	statements := map[string]*sql.Stmt{}

	line("ready\tgo-sql-driver/mysql (Debian golang-github-go-sql-driver-mysql-dev), %s", runtime.Version())
	out.Flush()
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for in.Scan() {
		f := strings.Split(in.Text(), "\t")
		cmd, sid := f[0], ""
		if len(f) > 1 {
			sid = f[1]
		}
		var err error
		switch cmd {
		case "open":
			var conn *sql.Conn
			if conn, err = db.Conn(ctx); err == nil {
				sessions[sid] = conn
			}
		case "query":
			var r *sql.Rows
			if r, err = sessions[sid].QueryContext(ctx, f[2]); err == nil {
				err = rows(r)
			}
		case "prepare":
			var st *sql.Stmt
			if st, err = sessions[sid].PrepareContext(ctx, f[3]); err == nil {
				statements[sid+"/"+f[2]] = st
			}
		case "execute":
			args := make([]interface{}, 0, len(f)-3)
			for _, a := range f[3:] {
				args = append(args, a)
			}
			var r *sql.Rows
			if r, err = statements[sid+"/"+f[2]].QueryContext(ctx, args...); err == nil {
				err = rows(r)
			}
		case "close":
			for key, st := range statements {
				if strings.HasPrefix(key, sid+"/") {
					st.Close()
					delete(statements, key)
				}
			}
			err = sessions[sid].Close()
			delete(sessions, sid)
		default:
			err = fmt.Errorf("unknown command %s", cmd)
		}
		if err != nil {
			fail(err)
		} else {
			line("ok")
		}
		out.Flush()
	}
}
