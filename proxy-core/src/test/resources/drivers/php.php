<?php
// PHP's mysqli or PDO_mysql (mysqlnd) for the driver matrix (io.sluice.drivers.DriverMatrixTest). Speaks the line
// protocol of io.sluice.drivers.ScriptedClient on stdin/stdout.
// Usage: php php.php mysqli|pdo HOST PORT USER PASSWORD DATABASE SERVER_PREPARE(0|1)
[$script, $api, $host, $port, $user, $password, $database, $serverPrepare] = $argv;
$port = (int) $port;
$serverPrepare = $serverPrepare === '1';
error_reporting(E_ALL & ~E_WARNING);

function out(string $line): void
{
    fwrite(STDOUT, $line . "\n");
}

function cell($v): string
{
    if ($v === null) {
        return '\N';
    }
    if (is_bool($v)) {
        return $v ? '1' : '0';
    }
    return str_replace(["\t", "\n"], ' ', (string) $v);
}

function rows(iterable $rows): void
{
    foreach ($rows as $row) {
        out("row\t" . implode("\t", array_map('cell', $row)));
    }
}

function fail(int $code, string $message): void
{
    out("error\t" . $code . "\t" . str_replace(["\t", "\n"], ' ', $message));
}

$sessions = [];
$statements = [];

if ($api === 'mysqli') {
    if (!extension_loaded('mysqli')) {
        fwrite(STDERR, "the mysqli extension is missing (apt-get install php-mysql)\n");
        exit(3);
    }
    mysqli_report(MYSQLI_REPORT_OFF);
    out("ready\tmysqli " . mysqli_get_client_info() . ", PHP " . PHP_VERSION);
} else {
    if (!extension_loaded('pdo_mysql')) {
        fwrite(STDERR, "the pdo_mysql extension is missing (apt-get install php-mysql)\n");
        exit(3);
    }
    out("ready\tPDO_mysql " . (new ReflectionExtension('pdo_mysql'))->getVersion() . ", PHP " . PHP_VERSION);
}

while (($line = fgets(STDIN)) !== false) {
    $f = explode("\t", rtrim($line, "\n"));
    $cmd = $f[0];
    $sid = $f[1] ?? '';
    if ($api === 'mysqli') {
        switch ($cmd) {
            case 'open':
                $m = mysqli_init();
                if (!@$m->real_connect($host, $user, $password, $database, $port)) {
                    fail(mysqli_connect_errno(), mysqli_connect_error());
                    break;
                }
                $sessions[$sid] = $m;
                out('ok');
                break;
            case 'query':
                $m = $sessions[$sid];
                $r = $m->query($f[2]);
                if ($r === false) {
                    fail($m->errno, $m->error);
                } else {
                    if ($r !== true) {
                        rows($r->fetch_all(MYSQLI_NUM));
                        $r->free();
                    }
                    out('ok');
                }
                break;
            case 'prepare':
                $m = $sessions[$sid];
                $st = $m->prepare($f[3]); // always server-side: mysqli has no emulation
                if ($st === false) {
                    fail($m->errno, $m->error);
                } else {
                    $statements[$sid . '/' . $f[2]] = $st;
                    out('ok');
                }
                break;
            case 'execute':
                $st = $statements[$sid . '/' . $f[2]];
                if (!$st->execute(array_slice($f, 3))) {
                    fail($st->errno, $st->error);
                    break;
                }
                $r = $st->get_result();
                if ($r !== false) {
                    rows($r->fetch_all(MYSQLI_NUM));
                    $r->free();
                } elseif ($st->errno) {
                    fail($st->errno, $st->error);
                    break;
                }
                out('ok');
                break;
            case 'close':
                foreach ($statements as $key => $st) {
                    if (str_starts_with($key, $sid . '/')) {
                        $st->close();
                        unset($statements[$key]);
                    }
                }
                $sessions[$sid]->close();
                unset($sessions[$sid]);
                out('ok');
                break;
            default:
                fail(0, "unknown command $cmd");
        }
        continue;
    }
    // PDO: exceptions carry the server's error code in errorInfo[1].
    try {
        switch ($cmd) {
            case 'open':
                $sessions[$sid] = new PDO("mysql:host=$host;port=$port;dbname=$database", $user, $password, [
                    PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION,
                    // PDO_mysql emulates prepared statements unless told otherwise.
                    PDO::ATTR_EMULATE_PREPARES => !$serverPrepare,
                ]);
                out('ok');
                break;
            case 'query':
                $pdo = $sessions[$sid];
                if ($serverPrepare) {
                    // query() would prepare every statement on the server: keep plain statements in the text protocol.
                    $pdo->setAttribute(PDO::ATTR_EMULATE_PREPARES, true);
                }
                try {
                    $r = $pdo->query($f[2]);
                    if ($r->columnCount() > 0) {
                        rows($r->fetchAll(PDO::FETCH_NUM));
                    }
                    $r->closeCursor();
                } finally {
                    if ($serverPrepare) {
                        $pdo->setAttribute(PDO::ATTR_EMULATE_PREPARES, false);
                    }
                }
                out('ok');
                break;
            case 'prepare':
                $statements[$sid . '/' . $f[2]] = $sessions[$sid]->prepare($f[3]);
                out('ok');
                break;
            case 'execute':
                $st = $statements[$sid . '/' . $f[2]];
                $st->execute(array_slice($f, 3));
                if ($st->columnCount() > 0) {
                    rows($st->fetchAll(PDO::FETCH_NUM));
                }
                $st->closeCursor();
                out('ok');
                break;
            case 'close':
                foreach (array_keys($statements) as $key) {
                    if (str_starts_with($key, $sid . '/')) {
                        unset($statements[$key]);
                    }
                }
                unset($sessions[$sid]); // PDO closes its connection when the last reference goes
                out('ok');
                break;
            default:
                fail(0, "unknown command $cmd");
        }
    } catch (PDOException $e) {
        // A failed connect has no errorInfo; its code is the server's error number.
        fail((int) ($e->errorInfo[1] ?? (is_int($e->getCode()) ? $e->getCode() : 0)), $e->getMessage());
    }
}
