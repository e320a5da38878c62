"""Minimal asyncio MySQL client protocol for the side loads of run.sh (workloads c and d).

Python 3 standard library only (no pip): the harness runs it with /usr/bin/python3 on a
bare Debian machine. It does just what the side loads need:

  * login: read HandshakeV10, answer HandshakeResponse41 with mysql_native_password
    (SHA1(pw) XOR SHA1(nonce20 + SHA1(SHA1(pw)))), follow an AuthSwitchRequest to
    mysql_native_password, expect OK;
  * COM_QUERY of a statement and read its whole result;
  * COM_QUIT.

CLIENT_CONNECT_WITH_DB is set only when a database is given: workload c must log in
without one (Sluice then binds no backend connection), workload d with one (Sluice takes
a pooled backend connection at login).
"""
import asyncio
import hashlib

CLIENT_LONG_PASSWORD = 0x00000001   # MariaDB reads bit 0 as "CLIENT_MYSQL": a MySQL-style client
CLIENT_LONG_FLAG = 0x00000004
CLIENT_CONNECT_WITH_DB = 0x00000008
CLIENT_PROTOCOL_41 = 0x00000200
CLIENT_TRANSACTIONS = 0x00002000
CLIENT_SECURE_CONNECTION = 0x00008000
CLIENT_PLUGIN_AUTH = 0x00080000
CLIENT_LOCAL_FILES = 0x00000080
CLIENT_MULTI_STATEMENTS = 0x00010000
CLIENT_MULTI_RESULTS = 0x00020000
CLIENT_PS_MULTI_RESULTS = 0x00040000
CLIENT_SESSION_TRACK = 0x00800000  # as libmariadb and the JDBC drivers: lets a TRANSACTION-pooling Sluice multiplex it

# The side clients log in with exactly the session-shaping flags, collation and MariaDB extended capabilities that
# sysbench's libmariadb sends (read off a capture of sysbench 1.0.20 against MariaDB 10.11). Sluice pools backend
# connections per such key, so a side client with other flags would need backend connections of its own and the
# churn test would measure that, not the proxy. libmariadb leaves CLIENT_LONG_PASSWORD (MariaDB's "CLIENT_MYSQL")
# unset and sends its extended capabilities in the last 4 of the 23 reserved bytes.
SYSBENCH_CAPABILITIES = (CLIENT_LONG_FLAG | CLIENT_LOCAL_FILES | CLIENT_PROTOCOL_41 | CLIENT_TRANSACTIONS
                         | CLIENT_SECURE_CONNECTION | CLIENT_MULTI_STATEMENTS | CLIENT_MULTI_RESULTS
                         | CLIENT_PS_MULTI_RESULTS | CLIENT_PLUGIN_AUTH | CLIENT_SESSION_TRACK)
SYSBENCH_MARIADB_CAPABILITIES = 0x1D  # progress, bulk operations, extended metadata, cache metadata

NATIVE = "mysql_native_password"
COM_QUIT = 0x01
COM_QUERY = 0x03
UTF8MB4_GENERAL_CI = 45


class MySQLError(Exception):
    """An ERR packet from the server, or a protocol step this client does not support."""

    def __init__(self, message, code=None):
        super().__init__(message)
        self.code = code

    def short(self):
        return f"{self.code}: {self}" if self.code else str(self)


def scramble_native(password: bytes, nonce: bytes) -> bytes:
    if not password:
        return b""  # an empty password is sent as an empty auth response
    h1 = hashlib.sha1(password).digest()
    h2 = hashlib.sha1(h1).digest()
    h3 = hashlib.sha1(nonce + h2).digest()
    return bytes(a ^ b for a, b in zip(h1, h3))


async def read_packet(reader):
    header = await reader.readexactly(4)
    length = int.from_bytes(header[:3], "little")
    return header[3], await reader.readexactly(length)


def write_packet(writer, seq, payload):
    writer.write(len(payload).to_bytes(3, "little") + bytes([seq & 0xFF]) + payload)


def _err(payload):
    code = int.from_bytes(payload[1:3], "little")
    msg = payload[3:]
    if msg[:1] == b"#":
        msg = msg[6:]  # '#' + 5-byte SQLSTATE
    return MySQLError(msg.decode("utf-8", "replace"), code)


def parse_handshake(payload):
    if payload[0] == 0xFF:
        raise _err(payload)
    if payload[0] != 10:
        raise MySQLError(f"unsupported handshake protocol version {payload[0]}")
    pos = payload.index(b"\x00", 1)
    server_version = payload[1:pos].decode("latin-1")
    pos += 1
    conn_id = int.from_bytes(payload[pos:pos + 4], "little")
    pos += 4
    nonce = payload[pos:pos + 8]
    pos += 9  # 8 bytes + filler
    caps = int.from_bytes(payload[pos:pos + 2], "little")
    pos += 2
    plugin = NATIVE
    if len(payload) > pos:
        pos += 1 + 2  # charset, status
        caps |= int.from_bytes(payload[pos:pos + 2], "little") << 16
        pos += 2
        auth_len = payload[pos]
        pos += 1 + 10  # auth data length, reserved
        if caps & CLIENT_SECURE_CONNECTION:
            n = max(13, auth_len - 8)
            nonce += payload[pos:pos + n].rstrip(b"\x00")[:12]
            pos += n
        if caps & CLIENT_PLUGIN_AUTH and pos < len(payload):
            end = payload.find(b"\x00", pos)
            plugin = payload[pos:end if end >= 0 else len(payload)].decode("latin-1") or NATIVE
    return {"server_version": server_version, "conn_id": conn_id, "nonce": nonce[:20], "caps": caps,
            "plugin": plugin}


async def login(host, port, user, password, db=None, timeout=10.0):
    """Open a connection and log in; returns (reader, writer). Raises MySQLError/OSError/TimeoutError."""
    return await asyncio.wait_for(_login(host, port, user, password, db), timeout)


async def _login(host, port, user, password, db):
    reader, writer = await asyncio.open_connection(host, port)
    try:
        seq, payload = await read_packet(reader)
        hs = parse_handshake(payload)
        pw = password.encode()
        caps = SYSBENCH_CAPABILITIES
        if db:
            caps |= CLIENT_CONNECT_WITH_DB
        # Answer with mysql_native_password whatever the server proposed; a server that wants
        # another plugin for this account sends an AuthSwitchRequest, handled below.
        auth = scramble_native(pw, hs["nonce"]) if hs["plugin"] == NATIVE else b""
        body = (caps.to_bytes(4, "little") + (1 << 24).to_bytes(4, "little") + bytes([UTF8MB4_GENERAL_CI])
                + b"\x00" * 19
                + SYSBENCH_MARIADB_CAPABILITIES.to_bytes(4, "little") + user.encode() + b"\x00" + bytes([len(auth)]) + auth)
        if db:
            body += db.encode() + b"\x00"
        body += NATIVE.encode() + b"\x00"
        seq = (seq + 1) & 0xFF
        write_packet(writer, seq, body)
        for _ in range(3):
            seq, payload = await read_packet(reader)
            kind = payload[0]
            if kind == 0x00:
                return reader, writer
            if kind == 0xFF:
                raise _err(payload)
            if kind == 0xFE:  # AuthSwitchRequest: plugin name NUL, plugin data
                end = payload.find(b"\x00", 1)
                plugin = payload[1:end].decode("latin-1") if end > 0 else ""
                if plugin != NATIVE:
                    raise MySQLError(f"server asks for auth plugin {plugin!r}; only {NATIVE} is supported")
                nonce = payload[end + 1:].rstrip(b"\x00")[:20]
                seq = (seq + 1) & 0xFF
                write_packet(writer, seq, scramble_native(pw, nonce))
                continue
            raise MySQLError(f"unexpected login packet 0x{kind:02x} (auth more data: plugin not supported)")
        raise MySQLError("too many login round trips")
    except BaseException:
        writer.close()
        raise


async def query(reader, writer, sql):
    """COM_QUERY; reads the whole result (text protocol, EOF packets). Returns the row count."""
    write_packet(writer, 0, bytes([COM_QUERY]) + sql.encode())
    await writer.drain()
    _, payload = await read_packet(reader)
    if payload[0] == 0xFF:
        raise _err(payload)
    if payload[0] == 0x00:
        return 0  # OK: no result set
    eofs = rows = 0
    while eofs < 2:  # column definitions, EOF, rows, EOF (no CLIENT_DEPRECATE_EOF)
        _, payload = await read_packet(reader)
        if payload[0] == 0xFF:
            raise _err(payload)
        if payload[0] == 0xFE and len(payload) < 9:
            eofs += 1
        elif eofs == 1:
            rows += 1
    return rows


async def quit_and_close(writer, timeout=2.0):
    """COM_QUIT, then close; never raises."""
    try:
        if not writer.is_closing():
            write_packet(writer, 0, bytes([COM_QUIT]))
            await asyncio.wait_for(writer.drain(), timeout)
    except Exception:
        pass
    writer.close()
    try:
        await asyncio.wait_for(writer.wait_closed(), timeout)
    except Exception:
        pass


def raise_nofile():
    """Soft RLIMIT_NOFILE up to the hard limit; returns the new soft limit."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):
            pass
    return soft


def percentile(sorted_values, p):
    if not sorted_values:
        return None
    import math
    k = min(len(sorted_values) - 1, max(0, math.ceil(p / 100.0 * len(sorted_values)) - 1))  # nearest rank
    return sorted_values[k]
