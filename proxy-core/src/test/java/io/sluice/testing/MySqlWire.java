package io.sluice.testing;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds MySQL wire bytes for tests and benchmarks: frames with sequence ids, the protocol's integer and string
 * encodings, server responses (OK, ERR, EOF, column definitions, text and binary rows, whole result sets, prepare OK,
 * LOCAL INFILE requests, the greeting) and client commands.
 *
 * <p>Everything here is written from the protocol documentation, not from Sluice's own codecs, so a test that feeds
 * these bytes to Sluice does not share code with what it checks. {@code MySqlWireTest} pins the encodings to the
 * documentation's examples and to what a real MariaDB sends. Payloads are plain {@code byte[]}; wrap them in a
 * {@code ByteBuf} where a test needs one.
 *
 * <p>Two shapes exist for the end of rows: with {@code CLIENT_DEPRECATE_EOF} an OK packet headed 0xFE
 * ({@link #okEof}), without it an EOF packet ({@link #eof}). Methods that build a response that ends in one take a
 * {@code deprecateEof} flag and pick the shape.
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_basic_packets.html">Basic packets</a>
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_basic_response_packets.html">Generic
 *     response packets</a>
 */
public final class MySqlWire {

    /** The largest payload one frame carries; a longer packet continues in further frames. */
    public static final int MAX_PAYLOAD = 0xFFFFFF;

    // Commands (the first payload byte of a client's command packet).
    public static final int COM_QUIT = 0x01;
    public static final int COM_INIT_DB = 0x02;
    public static final int COM_QUERY = 0x03;
    public static final int COM_FIELD_LIST = 0x04;
    public static final int COM_STATISTICS = 0x09;
    public static final int COM_PING = 0x0E;
    public static final int COM_CHANGE_USER = 0x11;
    public static final int COM_BINLOG_DUMP = 0x12;
    public static final int COM_STMT_PREPARE = 0x16;
    public static final int COM_STMT_EXECUTE = 0x17;
    public static final int COM_STMT_CLOSE = 0x19;
    public static final int COM_STMT_RESET = 0x1A;
    public static final int COM_SET_OPTION = 0x1B;
    public static final int COM_STMT_FETCH = 0x1C;
    public static final int COM_RESET_CONNECTION = 0x1F;

    // Server status flags (mysql_com.h).
    public static final int SERVER_STATUS_IN_TRANS = 0x0001;
    public static final int SERVER_STATUS_AUTOCOMMIT = 0x0002;
    public static final int SERVER_MORE_RESULTS_EXISTS = 0x0008;
    public static final int SERVER_STATUS_CURSOR_EXISTS = 0x0040;
    public static final int SERVER_STATUS_LAST_ROW_SENT = 0x0080;
    public static final int SERVER_SESSION_STATE_CHANGED = 0x4000;

    // Column types and collations the builders' callers use.
    public static final int MYSQL_TYPE_LONG = 0x03;
    public static final int MYSQL_TYPE_VAR_STRING = 0xFD;
    public static final int UTF8MB4_GENERAL_CI = 45;

    /** Session state change type of a system variable (SESSION_TRACK_SYSTEM_VARIABLES). */
    public static final int SESSION_TRACK_SYSTEM_VARIABLES = 0x00;
    /** MySQL's GTID tracker's entry type. */
    public static final int SESSION_TRACK_GTIDS = 0x03;

    private MySqlWire() {
    }

    // ---- encodings -------------------------------------------------------------------------------------------

    /** A growable payload with the protocol's little-endian integers and its string encodings. */
    public static final class Payload {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();

        private Payload() {
        }

        /** int&lt;1&gt;. */
        public Payload int1(int v) {
            out.write(v);
            return this;
        }

        /** int&lt;2&gt;, little-endian. */
        public Payload int2(int v) {
            return int1(v).int1(v >>> 8);
        }

        /** int&lt;3&gt;, little-endian. */
        public Payload int3(int v) {
            return int2(v).int1(v >>> 16);
        }

        /** int&lt;4&gt;, little-endian. */
        public Payload int4(int v) {
            return int2(v).int2(v >>> 16);
        }

        /** int&lt;8&gt;, little-endian. */
        public Payload int8(long v) {
            return int4((int) v).int4((int) (v >>> 32));
        }

        /** int&lt;lenenc&gt;: one byte below 0xFB, else 0xFC, 0xFD or 0xFE and 2, 3 or 8 bytes. */
        public Payload lenenc(long v) {
            if (v >= 0 && v < 0xFB) {
                return int1((int) v);
            }
            if (v >= 0 && v < 0x1_0000) {
                return int1(0xFC).int2((int) v);
            }
            if (v >= 0 && v < 0x100_0000) {
                return int1(0xFD).int3((int) v);
            }
            return int1(0xFE).int8(v);
        }

        /** Bytes as they are. */
        public Payload bytes(byte[] b) {
            out.writeBytes(b);
            return this;
        }

        /** {@code n} zero bytes (fillers, reserved fields). */
        public Payload zeros(int n) {
            return bytes(new byte[n]);
        }

        /** string&lt;EOF&gt; or string&lt;fix&gt;: UTF-8, no length. */
        public Payload str(String s) {
            return bytes(s.getBytes(StandardCharsets.UTF_8));
        }

        /** string&lt;NUL&gt;. */
        public Payload strNul(String s) {
            return str(s).int1(0);
        }

        /** string&lt;lenenc&gt; of UTF-8 text. */
        public Payload lenencStr(String s) {
            return lenencBytes(s.getBytes(StandardCharsets.UTF_8));
        }

        /** string&lt;lenenc&gt; of bytes. */
        public Payload lenencBytes(byte[] b) {
            return lenenc(b.length).bytes(b);
        }

        /** Bytes written so far. */
        public int size() {
            return out.size();
        }

        public byte[] toBytes() {
            return out.toByteArray();
        }
    }

    /** An empty payload to write into. */
    public static Payload payload() {
        return new Payload();
    }

    /** The bytes of {@code parts}, one after the other. */
    public static byte[] concat(byte[]... parts) {
        Payload all = payload();
        for (byte[] part : parts) {
            all.bytes(part);
        }
        return all.toBytes();
    }

    // ---- framing -------------------------------------------------------------------------------------------------

    /**
     * One frame: the payload's length (int&lt;3&gt;), the sequence id, the payload. The payload must fit one frame
     * (at most {@link #MAX_PAYLOAD} bytes); {@link Frames} splits longer packets.
     */
    public static byte[] frame(int sequenceId, byte[] payload) {
        if (payload.length > MAX_PAYLOAD) {
            throw new IllegalArgumentException(payload.length + " bytes do not fit one frame: use Frames");
        }
        return payload().int3(payload.length).int1(sequenceId & 0xFF).bytes(payload).toBytes();
    }

    /**
     * A stream of frames whose sequence ids run on from packet to packet, as one side of an exchange sends them. A
     * packet of {@link #MAX_PAYLOAD} bytes or more is split into full frames followed by a shorter one (an empty one
     * when the length divides evenly), each with the next sequence id.
     */
    public static final class Frames {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();
        private int sequenceId;

        /** A stream whose first frame has {@code firstSequenceId}: 0 for a command, 1 for the answer to one. */
        public Frames(int firstSequenceId) {
            this.sequenceId = firstSequenceId;
        }

        /** The id the next frame gets. */
        public int sequenceId() {
            return sequenceId;
        }

        /** Sets the id of the next frame: a new command starts again, or the other side's frames were skipped. */
        public Frames sequenceId(int next) {
            this.sequenceId = next;
            return this;
        }

        /** One logical packet, in as many frames as it needs. */
        public Frames packet(byte[] payload) {
            int offset = 0;
            while (true) {
                int length = Math.min(MAX_PAYLOAD, payload.length - offset);
                out.write(length);
                out.write(length >>> 8);
                out.write(length >>> 16);
                out.write(sequenceId++ & 0xFF);
                out.write(payload, offset, length);
                offset += length;
                if (length < MAX_PAYLOAD) {
                    return this;
                }
            }
        }

        /** Several packets, each as {@link #packet}. */
        public Frames packets(List<byte[]> payloads) {
            payloads.forEach(this::packet);
            return this;
        }

        /** Bytes written so far: the offset the next frame starts at. */
        public int size() {
            return out.size();
        }

        public byte[] toBytes() {
            return out.toByteArray();
        }
    }

    /** {@code payloads} as frames numbered from {@code firstSequenceId}, e.g. a whole response starting at 1. */
    public static byte[] frames(int firstSequenceId, List<byte[]> payloads) {
        return new Frames(firstSequenceId).packets(payloads).toBytes();
    }

    // ---- generic responses ---------------------------------------------------------------------------------------

    /**
     * OK_Packet (header 0x00) as sent to a client without CLIENT_SESSION_TRACK: affected rows, last insert id,
     * status, warnings, then {@code info} to the end of the packet.
     */
    public static byte[] ok(long affectedRows, long lastInsertId, int status, int warnings, String info) {
        return payload().int1(0x00).lenenc(affectedRows).lenenc(lastInsertId).int2(status).int2(warnings).str(info)
                .toBytes();
    }

    /** An OK with nothing but {@code status}. */
    public static byte[] ok(int status) {
        return ok(0, 0, status, 0, "");
    }

    /**
     * The OK_Packet headed 0xFE that ends rows when CLIENT_DEPRECATE_EOF is on (and no CLIENT_SESSION_TRACK):
     * affected rows 0, last insert id 0, status, no warnings, {@code info}.
     */
    public static byte[] okEof(int status, String info) {
        return payload().int1(0xFE).lenenc(0).lenenc(0).int2(status).int2(0).str(info).toBytes();
    }

    /** {@link #okEof(int, String)} without info. */
    public static byte[] okEof(int status) {
        return okEof(status, "");
    }

    /**
     * An OK_Packet as sent to a client with CLIENT_SESSION_TRACK: {@code info} is length-encoded, and when
     * {@code status} has {@link #SERVER_SESSION_STATE_CHANGED} the session state changes follow, length-encoded too.
     *
     * @param header 0x00 for an OK, 0xFE for the OK that ends rows under CLIENT_DEPRECATE_EOF
     * @param sessionState the changes, e.g. {@link #systemVariableChange}s one after the other
     */
    public static byte[] okWithSessionState(int header, long affectedRows, long lastInsertId, int status,
            int warnings, String info, byte[] sessionState) {
        Payload p = payload().int1(header).lenenc(affectedRows).lenenc(lastInsertId).int2(status).int2(warnings)
                .lenencStr(info);
        if ((status & SERVER_SESSION_STATE_CHANGED) != 0) {
            p.lenencBytes(sessionState);
        }
        return p.toBytes();
    }

    /** One session state change: a system variable's new value (SESSION_TRACK_SYSTEM_VARIABLES). */
    public static byte[] systemVariableChange(String name, String value) {
        byte[] data = payload().lenencStr(name).lenencStr(value).toBytes();
        return payload().int1(SESSION_TRACK_SYSTEM_VARIABLES).lenencBytes(data).toBytes();
    }

    /**
     * One session state change as MySQL's {@code session_track_gtids} writes it (SESSION_TRACK_GTIDS, type 0x03): the
     * entry's length, then its data, the encoding specification 0 (text) and the GTID set as a length-encoded string.
     */
    public static byte[] gtidsChange(String gtidSet) {
        byte[] data = payload().int1(0).lenencStr(gtidSet).toBytes();
        return payload().int1(SESSION_TRACK_GTIDS).lenencBytes(data).toBytes();
    }

    /** EOF_Packet: 0xFE, no warnings, {@code status}. */
    public static byte[] eof(int status) {
        return payload().int1(0xFE).int2(0).int2(status).toBytes();
    }

    /** What ends rows: {@link #okEof(int)} with CLIENT_DEPRECATE_EOF, {@link #eof} without. */
    public static byte[] endOfRows(boolean deprecateEof, int status) {
        return deprecateEof ? okEof(status) : eof(status);
    }

    /** ERR_Packet with a SQL state (CLIENT_PROTOCOL_41): 0xFF, code, '#', state, message. */
    public static byte[] err(int code, String sqlState, String message) {
        return payload().int1(0xFF).int2(code).str("#").str(sqlState).str(message).toBytes();
    }

    // ---- result sets -----------------------------------------------------------------------------------------

    /** The column count that starts a result set. */
    public static byte[] columnCount(long n) {
        return payload().lenenc(n).toBytes();
    }

    /**
     * A column count with MariaDB's "metadata follows" byte (MARIADB_CLIENT_CACHE_METADATA): 0 when the server
     * leaves the column definitions out.
     */
    public static byte[] columnCount(long n, boolean metadataFollows) {
        return payload().lenenc(n).int1(metadataFollows ? 1 : 0).toBytes();
    }

    /** Protocol::ColumnDefinition41 of column {@code name} of table db.t, utf8mb4, length 64. */
    public static byte[] columnDefinition(String name, int type) {
        return columnDefinition("db", "t", name, 255, 64, type);
    }

    /**
     * Protocol::ColumnDefinition41: catalog "def", schema, table and original table, name and original name, then
     * the fixed-length fields (character set, column length, type, no flags, no decimals).
     */
    public static byte[] columnDefinition(String schema, String table, String name, int collation, long length,
            int type) {
        return payload().lenencStr("def").lenencStr(schema).lenencStr(table).lenencStr(table).lenencStr(name)
                .lenencStr(name).lenenc(0x0C).int2(collation).int4((int) length).int1(type).int2(0).int1(0).int2(0)
                .toBytes();
    }

    /** A text row: each value a string&lt;lenenc&gt;, 0xFB for NULL. */
    public static byte[] textRow(String... values) {
        Payload p = payload();
        for (String v : values) {
            if (v == null) {
                p.int1(0xFB);
            } else {
                p.lenencStr(v);
            }
        }
        return p.toBytes();
    }

    /** A binary row of 4-byte integers: 0x00, the NULL bitmap (offset 2, no NULLs), then the values. */
    public static byte[] binaryRow(int... values) {
        Payload p = payload().int1(0x00).zeros((values.length + 7 + 2) / 8);
        for (int v : values) {
            p.int4(v);
        }
        return p.toBytes();
    }

    /**
     * A whole result set as packets: the column count, the definitions, an EOF unless CLIENT_DEPRECATE_EOF, the
     * rows, and {@link #endOfRows}. Frame it with {@link #frames}{@code (1, ...)}.
     *
     * @param status the status of the EOF after the definitions and of the end of rows
     */
    public static List<byte[]> resultSet(boolean deprecateEof, List<byte[]> columnDefinitions, List<byte[]> rows,
            int status) {
        List<byte[]> packets = new ArrayList<>();
        packets.add(columnCount(columnDefinitions.size()));
        packets.addAll(columnDefinitions);
        if (!deprecateEof) {
            packets.add(eof(status));
        }
        packets.addAll(rows);
        packets.add(endOfRows(deprecateEof, status));
        return packets;
    }

    /** COM_STMT_PREPARE_OK: 0x00, statement id, columns, parameters, filler, warnings. */
    public static byte[] prepareOk(int statementId, int columns, int params, int warnings) {
        return payload().int1(0x00).int4(statementId).int2(columns).int2(params).int1(0).int2(warnings).toBytes();
    }

    /** LOCAL INFILE request: 0xFB and the file name. */
    public static byte[] localInfile(String fileName) {
        return payload().int1(0xFB).str(fileName).toBytes();
    }

    // ---- connection phase ------------------------------------------------------------------------------------

    /**
     * HandshakeV10, the server's greeting, with a 20-byte scramble and an auth plugin (so {@code capabilities}
     * should have CLIENT_PLUGIN_AUTH and CLIENT_SECURE_CONNECTION). The reserved bytes are zero: no MariaDB
     * extended capabilities.
     *
     * @param scramble 20 bytes without a NUL among them
     */
    public static byte[] handshakeV10(String serverVersion, int connectionId, byte[] scramble, int capabilities,
            int collation, int status, String authPlugin) {
        if (scramble.length != 20) {
            throw new IllegalArgumentException("scramble: " + scramble.length + " bytes (expected: 20)");
        }
        return payload().int1(10).strNul(serverVersion).int4(connectionId)
                .bytes(java.util.Arrays.copyOfRange(scramble, 0, 8)).int1(0)
                .int2(capabilities).int1(collation).int2(status).int2(capabilities >>> 16)
                .int1(scramble.length + 1).zeros(10)
                .bytes(java.util.Arrays.copyOfRange(scramble, 8, 20)).int1(0)
                .strNul(authPlugin)
                .toBytes();
    }

    /**
     * HandshakeResponse41 with a one-byte auth response length (CLIENT_SECURE_CONNECTION): capabilities, max packet
     * size, collation, 23 zero bytes, user, auth response, then the database and the plugin name when
     * {@code capabilities} has CLIENT_CONNECT_WITH_DB (0x8) and CLIENT_PLUGIN_AUTH (0x80000).
     */
    public static byte[] handshakeResponse41(int capabilities, int maxPacketSize, int collation, String user,
            byte[] authResponse, String database, String authPlugin) {
        Payload p = payload().int4(capabilities).int4(maxPacketSize).int1(collation).zeros(23).strNul(user)
                .int1(authResponse.length).bytes(authResponse);
        if ((capabilities & 0x8) != 0) {
            p.strNul(database);
        }
        if ((capabilities & 0x80000) != 0) {
            p.strNul(authPlugin);
        }
        return p.toBytes();
    }

    // ---- commands --------------------------------------------------------------------------------------------

    /** A command packet's payload: the command byte, then {@code argument}. */
    public static byte[] command(int command, byte[] argument) {
        return payload().int1(command).bytes(argument).toBytes();
    }

    /** COM_QUERY of {@code sql} (UTF-8). */
    public static byte[] comQuery(String sql) {
        return payload().int1(COM_QUERY).str(sql).toBytes();
    }

    /** COM_INIT_DB: switches to {@code schema}. */
    public static byte[] comInitDb(String schema) {
        return payload().int1(COM_INIT_DB).str(schema).toBytes();
    }

    /** COM_PING. */
    public static byte[] comPing() {
        return command(COM_PING, new byte[0]);
    }

    /** COM_STMT_PREPARE of {@code sql}. */
    public static byte[] comStmtPrepare(String sql) {
        return payload().int1(COM_STMT_PREPARE).str(sql).toBytes();
    }

    /** COM_STMT_CLOSE of {@code statementId}. */
    public static byte[] comStmtClose(int statementId) {
        return payload().int1(COM_STMT_CLOSE).int4(statementId).toBytes();
    }

    /**
     * COM_STMT_EXECUTE of a statement without parameters: no cursor (or {@code cursorFlags}, e.g. 1 for a read-only
     * cursor), iteration count 1.
     */
    public static byte[] comStmtExecute(int statementId, int cursorFlags) {
        return payload().int1(COM_STMT_EXECUTE).int4(statementId).int1(cursorFlags).int4(1).toBytes();
    }

    /** COM_STMT_FETCH of {@code rows} rows from an open cursor. */
    public static byte[] comStmtFetch(int statementId, int rows) {
        return payload().int1(COM_STMT_FETCH).int4(statementId).int4(rows).toBytes();
    }
}
