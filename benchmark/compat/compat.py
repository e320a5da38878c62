#!/usr/bin/env python3
"""Helpers of benchmark/compat/run.sh (MariaDB's test suite direct and through Sluice).

  compat.py select ROOT PATTERN...       the tests PATTERN names, one a line: id TAB path TAB static reason
  compat.py restore-sql BASE CURRENT     SET GLOBAL statements that put CURRENT's variables back to BASE's
  compat.py diff A B [N]                 nothing when A and B are equal, else their first N differing lines
  compat.py report OUT                   OUT/results.csv and OUT/table.md from OUT/records.tsv

Standard library only: the script runs with the system python3.
"""
import csv
import difflib
import fnmatch
import glob
import os
import re
import sys

# ---------------------------------------------------------------------------------------------- select

# mysqltest commands that run programs, stop the server or touch files: a test that uses them (itself or in a file
# it sources) needs mysql-test-run's environment (its vardir, its client binaries, a server it can restart) and is
# not run standalone. Run as root, such a command could also reach outside the scratch folder.
PROCESS_COMMANDS = {"exec", "exec_in_background", "system", "perl", "shutdown_server", "send_shutdown"}
FILE_COMMANDS = {"write_file", "append_file", "remove_file", "remove_files_wildcard", "copy_file",
                 "copy_files_wildcard", "move_file", "mkdir", "rmdir", "force-rmdir", "force-cpdir", "file_exists",
                 "cat_file", "diff_files", "list_files", "list_files_write_file", "list_files_append_file", "chmod"}
REPLICATION_COMMANDS = {"sync_slave_with_master", "sync_with_master", "save_master_pos", "wait_for_slave_to_stop"}
# variables that only mysql-test-run defines (a test that reads one gets an empty string standalone)
MTR_VARIABLES = re.compile(r"\$(MYSQLTEST_VARDIR|MYSQL_TMP_DIR|MYSQL_TEST_DIR|MYSQL_BINLOG|MYSQL_DUMP\w*|MYSQLADMIN|"
                           r"MYSQL_CHECK|MYSQL_IMPORT|MYSQL_SHOW|MYSQL_SLAP|MYSQL_UPGRADE|MYSQL_CLIENT_TEST|"
                           r"MYSQL_PLUGIN|MYSQL_MY_PRINT_DEFAULTS|MYSQLD\b|MYSQLD_BOOTSTRAP\w*|MYSQL_SHAREDIR|"
                           r"MYSQL_CHARSETSDIR|MYSQL_LIBDIR|MYSQLTEST\b|MYSQL\b|MYSQL_TZINFO_TO_SQL|EXE_MYSQL\w*|"
                           r"SLAVE_MYPORT|MASTER_MYPORT1|MYSQLD_LAST_CMD|MYSQLD_CMD|MARIADB\w*|INNOCHECKSUM|"
                           r"MYISAMCHK|MYISAMPACK|ARIA_CHK|ARIA_PACK|MYSQL_\w*_DIR)")
INCLUDE_REASONS = [
    (re.compile(r"(restart|kill|start|shutdown)_mysqld|restart_and_|kill_and_restart|wait_until_disconnected|"
                r"crash_mysqld|restart_abort"), "restarts the server"),
    (re.compile(r"master-slave|rpl_|have_binlog_format|have_log_bin|galera"), "replication or binary log"),
    (re.compile(r"have_debug"), "needs a debug build"),
]
SOURCE = re.compile(r"^\s*(?:--\s*)?source\s+([^\s;]+)", re.I)
COMMAND = re.compile(r"^\s*(?:--\s*)?([a-z_-]+)\b", re.I)


class Scanner:
    def __init__(self, root):
        self.root = root
        self.cache = {}

    def resolve(self, name, current):
        name = name.strip().strip("'\"")
        if "$" in name:
            return None
        for base in (os.path.dirname(current), self.root):
            p = os.path.normpath(os.path.join(base, name))
            if os.path.isfile(p):
                return p
        return None

    def reasons(self, path, depth=0):
        """Why the file at path (and what it sources) cannot run standalone: a set of short reasons."""
        if path in self.cache:
            return self.cache[path]
        self.cache[path] = set()   # cycles
        found = set()
        try:
            text = open(path, encoding="latin-1").read()
        except OSError:
            return found
        in_perl = False
        for raw in text.splitlines():
            line = raw.strip()
            if in_perl:
                if line.startswith("EOF"):
                    in_perl = False
                continue
            if not line or line.startswith("#"):
                continue
            m = SOURCE.match(line)
            if m:
                inc = m.group(1)
                for rx, why in INCLUDE_REASONS:
                    if rx.search(inc):
                        found.add(why)
                target = self.resolve(inc, path)
                if target and depth < 12:
                    found |= self.reasons(target, depth + 1)
                continue
            m = COMMAND.match(line)
            if m:
                cmd = m.group(1).lower()
                # a command is a line starting with it; an SQL statement never starts with these words
                if cmd in PROCESS_COMMANDS and (line.startswith("--") or re.match(r"^[a-z_]+\s*(;|\s)", line, re.I)):
                    found.add("runs programs or stops the server")
                    if cmd == "perl":
                        in_perl = True
                elif cmd in FILE_COMMANDS and (line.startswith("--") or re.match(r"^[a-z_-]+\s", line, re.I)):
                    found.add("reads or writes files of mysql-test-run's vardir")
                elif cmd in REPLICATION_COMMANDS:
                    found.add("replication or binary log")
            if MTR_VARIABLES.search(line) and not re.match(r"^(--\s*)?replace_(result|regex)", line, re.I):
                found.add("needs mysql-test-run's environment variables")
        self.cache[path] = found
        return found


def server_option_files(path):
    base = path[:-len(".test")]
    return [os.path.basename(base + ext) for ext in (".opt", "-master.opt", ".cnf", ".combinations")
            if os.path.exists(base + ext)]


def test_files(root, pattern):
    """pattern: NAME-GLOB (suite main), main/NAME-GLOB, or SUITE/NAME-GLOB (mysql-test/suite/SUITE/t/)."""
    suite, _, name = pattern.rpartition("/")
    suite = suite or "main"
    folder = os.path.join(root, "main") if suite == "main" else os.path.join(root, "suite", suite, "t")
    return [(suite + "/" + os.path.basename(p)[:-5], p)
            for p in sorted(glob.glob(os.path.join(folder, "*.test")))
            if fnmatch.fnmatchcase(os.path.basename(p)[:-5], name)]


def cmd_select(root, patterns):
    scanner = Scanner(root)
    seen = set()
    for pattern in patterns:
        for test_id, path in test_files(root, pattern):
            if test_id in seen:
                continue
            seen.add(test_id)
            reasons = []
            opts = server_option_files(path)
            if opts:
                reasons.append("needs server options (" + ", ".join(opts) + ")")
            reasons += sorted(scanner.reasons(path))
            print(f"{test_id}\t{path}\t{'; '.join(reasons)}")


# ---------------------------------------------------------------------------------------------- restore-sql

# session-only or self-changing values that SHOW GLOBAL VARIABLES lists: never set back
NOT_RESTORED = {"timestamp", "rand_seed1", "rand_seed2", "last_insert_id", "insert_id", "identity", "warning_count",
                "error_count", "in_transaction", "pseudo_thread_id", "last_gtid", "gtid_binlog_pos",
                "gtid_binlog_state", "gtid_current_pos", "server_uid", "external_user", "proxy_user"}


def read_vars(path):
    out = {}
    for line in open(path, encoding="utf-8", errors="surrogateescape"):
        line = line.rstrip("\n")
        name, _, value = line.partition("\t")
        out[name] = unescape(value)
    return out


def unescape(v):  # the mariadb client's batch mode escapes \ TAB NL NUL
    return re.sub(r"\\([\\tn0])", lambda m: {"\\": "\\", "t": "\t", "n": "\n", "0": "\0"}[m.group(1)], v)


def literal(v):
    if re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", v):
        return v
    return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"


def cmd_restore_sql(base_path, cur_path):
    base, cur = read_vars(base_path), read_vars(cur_path)
    for name in sorted(base):
        if name in NOT_RESTORED or name not in cur or cur[name] == base[name]:
            continue
        print(f"SET GLOBAL {name} = {literal(base[name])};")


# ---------------------------------------------------------------------------------------------- diff

def read_lines(path):
    try:
        return open(path, encoding="utf-8", errors="replace").read().splitlines()
    except OSError:
        return ["<no output>"]


def first_difference(a_lines, b_lines, n=3, width=160):
    """The first differing hunk as 'line N: -old / +new' text (at most n lines each side), '' when equal."""
    if a_lines == b_lines:
        return ""
    sm = difflib.SequenceMatcher(None, a_lines, b_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            continue
        cut = lambda s: s if len(s) <= width else s[:width] + "…"
        parts = [f"line {i1 + 1}:"]
        parts += ["-" + cut(s) for s in a_lines[i1:min(i2, i1 + n)]]
        if i2 - i1 > n:
            parts.append(f"-(… {i2 - i1 - n} more)")
        parts += ["+" + cut(s) for s in b_lines[j1:min(j2, j1 + n)]]
        if j2 - j1 > n:
            parts.append(f"+(… {j2 - j1 - n} more)")
        return "\n".join(parts)
    return ""


def cmd_diff(a, b, n=3):
    d = first_difference(read_lines(a), read_lines(b), n)
    if d:
        print(d)
        return 1
    return 0


# ---------------------------------------------------------------------------------------------- report

FIELDS = ["test", "runnable", "not_runnable_reason", "direct_stable", "session", "transaction", "direct_seconds",
          "session_first_difference", "transaction_first_difference", "direct_first_difference"]


def md(s):
    return s.replace("|", "\\|").replace("\n", "<br>").replace("`", "'")


def cmd_report(out):
    rows = []
    with open(os.path.join(out, "records.tsv"), encoding="utf-8", errors="replace") as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            cols += [""] * (len(FIELDS) - len(cols))
            rows.append(dict(zip(FIELDS, [c.replace("\\n", "\n") for c in cols])))
    with open(os.path.join(out, "results.csv"), "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)

    meta = {}
    if os.path.exists(os.path.join(out, "meta.txt")):
        for line in open(os.path.join(out, "meta.txt"), encoding="utf-8"):
            k, _, v = line.rstrip("\n").partition("=")
            meta[k] = v
    runnable = [r for r in rows if r["runnable"] == "yes"]
    stable = [r for r in runnable if r["direct_stable"] == "yes"]
    modes = [m for m in ("session", "transaction") if any(r[m] for r in stable)]
    count = lambda m, v: sum(1 for r in stable if r[m] == v)
    lines = [f"# MariaDB's test suite direct and through Sluice ({meta.get('started', '?')})", ""]
    lines += [f"- MariaDB: {meta.get('mariadb', '?')}; mariadb-test from `{meta.get('suite', '?')}`",
              f"- Sluice: {meta.get('sluice', '?')}",
              f"- Tests: {meta.get('selection', '?')}",
              f"- Command: `{meta.get('command', '?')}`", ""]
    lines += ["| | tests |", "| --- | ---: |",
              f"| selected | {len(rows)} |",
              f"| not runnable standalone | {len(rows) - len(runnable)} |",
              f"| runnable | {len(runnable)} |",
              f"| direct-stable (two direct runs agree) | {len(stable)} |"]
    for m in modes:
        lines.append(f"| same through Sluice {m.upper()} | {count(m, 'same')} |")
        lines.append(f"| different through Sluice {m.upper()} | {count(m, 'different')} |")
        if count(m, "flaky"):
            lines.append(f"| flaky through Sluice {m.upper()} (one run of two differed) | {count(m, 'flaky')} |")
    lines.append("")
    differing = [r for r in stable if any(r[m] not in ("same", "") for m in modes)]
    lines += ["## Tests that differ through Sluice", ""]
    if differing:
        lines += ["| test | " + " | ".join(m.upper() for m in modes) + " | first difference (- direct, + Sluice) |",
                  "| --- | " + " | ".join("---" for _ in modes) + " | --- |"]
        for r in differing:
            diff = next((r[m + "_first_difference"] for m in modes if r[m + "_first_difference"]), "")
            lines.append(f"| {r['test']} | " + " | ".join(r[m] for m in modes) + f" | `{md(diff)}` |")
    else:
        lines.append("None.")
    lines.append("")
    unstable = [r for r in runnable if r["direct_stable"] != "yes"]
    lines += ["## Runnable but not direct-stable (not compared)", ""]
    lines += [f"- {r['test']}: `{md(r['direct_first_difference'].splitlines()[0] if r['direct_first_difference'] else '')}`"
              for r in unstable] or ["None."]
    lines.append("")
    kills = os.path.join(out, "restore-kills.txt")
    if os.path.exists(kills):
        lines += ["## Locks left held", "",
                  "After these runs a lock was still held on a server connection when the script restored the server "
                  "(a test stopped half-way, or a lock stayed on a pooled connection): every other connection to the "
                  "disposable MariaDB was killed, Sluice's pooled ones included.", ""]
        lines += [f"- {line.strip()}" for line in open(kills, encoding="utf-8") if line.strip()]
        lines.append("")
    lines += ["## Not runnable standalone (not counted)", "", "| test | reason |", "| --- | --- |"]
    lines += [f"| {r['test']} | {md(r['not_runnable_reason'])} |" for r in rows if r["runnable"] != "yes"]
    lines.append("")
    with open(os.path.join(out, "table.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    print("\n".join(lines[:20 + len(modes) * 3]))


def main(argv):
    if len(argv) >= 3 and argv[1] == "select":
        cmd_select(argv[2], argv[3:])
    elif len(argv) == 4 and argv[1] == "restore-sql":
        cmd_restore_sql(argv[2], argv[3])
    elif len(argv) in (4, 5) and argv[1] == "diff":
        return cmd_diff(argv[2], argv[3], int(argv[4]) if len(argv) == 5 else 3)
    elif len(argv) == 3 and argv[1] == "report":
        cmd_report(argv[2])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
