package io.sluice.benchmark;

import io.netty.buffer.ByteBuf;
import io.sluice.protocol.Packets;
import java.nio.charset.StandardCharsets;

/** Writes the MySQL packets the benchmarks feed to Sluice: built once in setup, so speed does not matter here. */
final class Wire {
    static final int COM_QUERY = 0x03;
    static final int SERVER_STATUS_AUTOCOMMIT = 0x0002;
    static final int MYSQL_TYPE_VAR_STRING = 0xFD;
    static final int UTF8MB4_GENERAL_CI = 45;

    private Wire() {
    }

    /** One frame: header (length, sequence id) then {@code payload}. Payloads must stay below 16 MiB. */
    static void frame(ByteBuf out, int sequenceId, byte[] payload) {
        out.writeMediumLE(payload.length);
        out.writeByte(sequenceId & 0xFF);
        out.writeBytes(payload);
    }

    /** A COM_QUERY frame of {@code sql}. */
    static void comQuery(ByteBuf out, String sql) {
        byte[] text = sql.getBytes(StandardCharsets.UTF_8);
        byte[] payload = new byte[1 + text.length];
        payload[0] = COM_QUERY;
        System.arraycopy(text, 0, payload, 1, text.length);
        frame(out, 0, payload);
    }

    static void lenenc(ByteBuf out, long value) {
        if (value < 0xFB) {
            out.writeByte((int) value);
        } else if (value < 1 << 16) {
            out.writeByte(0xFC).writeShortLE((int) value);
        } else if (value < 1 << 24) {
            out.writeByte(0xFD).writeMediumLE((int) value);
        } else {
            out.writeByte(0xFE).writeLongLE(value);
        }
    }

    static void lenencString(ByteBuf out, String value) {
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        lenenc(out, bytes.length);
        out.writeBytes(bytes);
    }

    /** Copies the readable bytes of a scratch payload buffer into a frame, then empties the scratch. */
    static void frame(ByteBuf out, int sequenceId, ByteBuf scratch) {
        byte[] payload = new byte[scratch.readableBytes()];
        scratch.readBytes(payload);
        scratch.clear();
        frame(out, sequenceId, payload);
    }

    /**
     * A whole text result set as a server sends it after COM_QUERY: column count, column definitions, an EOF
     * unless CLIENT_DEPRECATE_EOF, the rows, then EOF (or an OK headed 0xFE with CLIENT_DEPRECATE_EOF).
     *
     * @param rowValue each row carries {@code columns} copies of this value
     */
    static void textResultSet(ByteBuf out, int columns, int rows, String rowValue, boolean deprecateEof) {
        ByteBuf p = out.alloc().heapBuffer();
        try {
            int seq = 1;
            lenenc(p, columns);
            frame(out, seq++, p);
            for (int c = 0; c < columns; c++) {
                // ColumnDefinition41: catalog, schema, table, org_table, name, org_name, fixed-length fields
                lenencString(p, "def");
                lenencString(p, "sbtest");
                lenencString(p, "sbtest1");
                lenencString(p, "sbtest1");
                lenencString(p, "c" + c);
                lenencString(p, "c" + c);
                p.writeByte(0x0C);
                p.writeShortLE(UTF8MB4_GENERAL_CI);
                p.writeIntLE(480);
                p.writeByte(MYSQL_TYPE_VAR_STRING);
                p.writeShortLE(0);
                p.writeByte(0);
                p.writeShortLE(0);
                frame(out, seq++, p);
            }
            if (!deprecateEof) {
                eof(p);
                frame(out, seq++, p);
            }
            for (int r = 0; r < rows; r++) {
                for (int c = 0; c < columns; c++) {
                    lenencString(p, rowValue);
                }
                frame(out, seq++, p);
            }
            if (deprecateEof) {
                // OK packet headed 0xFE: affected rows, last insert id, status, warnings
                p.writeByte(Packets.EOF_HEADER);
                lenenc(p, 0);
                lenenc(p, 0);
                p.writeShortLE(SERVER_STATUS_AUTOCOMMIT);
                p.writeShortLE(0);
            } else {
                eof(p);
            }
            frame(out, seq, p);
        } finally {
            p.release();
        }
    }

    private static void eof(ByteBuf p) {
        p.writeByte(Packets.EOF_HEADER);
        p.writeShortLE(0); // warnings
        p.writeShortLE(SERVER_STATUS_AUTOCOMMIT);
    }
}
