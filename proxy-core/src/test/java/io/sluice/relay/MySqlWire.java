package io.sluice.relay;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Builders for the payloads of MySQL server responses, written from the protocol documentation so the tests do not
 * share code with the tracker they check.
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_basic_response_packets.html">Generic
 *     response packets</a>
 */
final class MySqlWire {
    static final int MAX_PAYLOAD = 0xFFFFFF;

    private MySqlWire() {
    }

    /** A growable payload with the protocol's integer and string encodings. */
    static final class Payload {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();

        Payload int1(int v) {
            out.write(v);
            return this;
        }

        Payload int2(int v) {
            return int1(v).int1(v >>> 8);
        }

        Payload int3(int v) {
            return int2(v).int1(v >>> 16);
        }

        Payload int4(int v) {
            return int2(v).int2(v >>> 16);
        }

        Payload int8(long v) {
            return int4((int) v).int4((int) (v >>> 32));
        }

        Payload lenenc(long v) {
            if (v < 0xFB) {
                return int1((int) v);
            }
            if (v < 0x1_0000) {
                return int1(0xFC).int2((int) v);
            }
            if (v < 0x100_0000) {
                return int1(0xFD).int3((int) v);
            }
            return int1(0xFE).int8(v);
        }

        Payload bytes(byte[] b) {
            out.writeBytes(b);
            return this;
        }

        Payload str(String s) {
            return bytes(s.getBytes(StandardCharsets.UTF_8));
        }

        Payload strNul(String s) {
            return str(s).int1(0);
        }

        Payload lenencStr(String s) {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            return lenenc(b.length).bytes(b);
        }

        byte[] toBytes() {
            return out.toByteArray();
        }
    }

    static Payload payload() {
        return new Payload();
    }

    /** OK_Packet, header 0x00. */
    static byte[] ok(long affectedRows, long lastInsertId, int status, int warnings, String info) {
        return payload().int1(0x00).lenenc(affectedRows).lenenc(lastInsertId).int2(status).int2(warnings).str(info)
                .toBytes();
    }

    static byte[] ok(int status) {
        return ok(0, 0, status, 0, "");
    }

    /** The OK_Packet headed 0xFE that ends a result set when CLIENT_DEPRECATE_EOF is on. */
    static byte[] okEof(int status, String info) {
        return payload().int1(0xFE).lenenc(0).lenenc(0).int2(status).int2(0).str(info).toBytes();
    }

    /** EOF_Packet: 0xFE, warnings, status. */
    static byte[] eof(int status) {
        return payload().int1(0xFE).int2(0).int2(status).toBytes();
    }

    /** ERR_Packet with a SQL state (CLIENT_PROTOCOL_41). */
    static byte[] err(int code, String sqlState, String message) {
        return payload().int1(0xFF).int2(code).str("#").str(sqlState).str(message).toBytes();
    }

    static byte[] columnCount(long n) {
        return payload().lenenc(n).toBytes();
    }

    /** A column count with MariaDB's "metadata follows" byte (MARIADB_CLIENT_CACHE_METADATA). */
    static byte[] columnCount(long n, boolean metadataFollows) {
        return payload().lenenc(n).int1(metadataFollows ? 1 : 0).toBytes();
    }

    /** Protocol::ColumnDefinition41. */
    static byte[] columnDefinition(String name, int type) {
        return payload().lenencStr("def").lenencStr("db").lenencStr("t").lenencStr("t").lenencStr(name)
                .lenencStr(name).lenenc(0x0C).int2(255).int4(64).int1(type).int2(0).int1(0).int2(0).toBytes();
    }

    /** A text row: lenenc strings, 0xFB for NULL. */
    static byte[] textRow(String... values) {
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

    /** A binary row of 4-byte integers: 0x00, the NULL bitmap (offset 2), then the values. */
    static byte[] binaryRow(int... values) {
        Payload p = payload().int1(0x00);
        byte[] bitmap = new byte[(values.length + 7 + 2) / 8];
        p.bytes(bitmap);
        for (int v : values) {
            p.int4(v);
        }
        return p.toBytes();
    }

    /** COM_STMT_PREPARE_OK. */
    static byte[] prepareOk(int statementId, int columns, int params, int warnings) {
        return payload().int1(0x00).int4(statementId).int2(columns).int2(params).int1(0).int2(warnings).toBytes();
    }

    /** LOCAL INFILE request: 0xFB and the file name. */
    static byte[] localInfile(String fileName) {
        return payload().int1(0xFB).str(fileName).toBytes();
    }
}
