package io.sluice.capture;

import static io.sluice.capture.RecordField.AFFECTED_ROWS;
import static io.sluice.capture.RecordField.CAPABILITIES;
import static io.sluice.capture.RecordField.CLIENT;
import static io.sluice.capture.RecordField.COLLATION_ID;
import static io.sluice.capture.RecordField.COMMAND_BYTE;
import static io.sluice.capture.RecordField.DURATION;
import static io.sluice.capture.RecordField.ERROR_CODE;
import static io.sluice.capture.RecordField.OPEN_BEFORE;
import static io.sluice.capture.RecordField.OUTCOME;
import static io.sluice.capture.RecordField.PAYLOAD;
import static io.sluice.capture.RecordField.RECORDS_IN_FILE;
import static io.sluice.capture.RecordField.ROWS;
import static io.sluice.capture.RecordField.SCHEMA;
import static io.sluice.capture.RecordField.SESSION_ID;
import static io.sluice.capture.RecordField.STATEMENT_ID;
import static io.sluice.capture.RecordField.TIME;
import static io.sluice.capture.RecordField.TRUNCATED;
import static io.sluice.capture.RecordField.USER;

/**
 * The record kinds of a capture file, each with its type byte and its fields in file order: the one table that both
 * {@link RecordEncoder} and {@link RecordDecoder} walk, so that they cannot disagree on a record's layout. A record is
 * {@code u8 type, u32 body length, body}, the body being these fields one after the other.
 *
 * <p>The type bytes and the field orders are the file format (docs/traffic-capture.md): changing one means a new
 * format version.
 */
enum RecordKind {
    SESSION_BEGIN(1, SESSION_ID, TIME, OPEN_BEFORE, CAPABILITIES, COLLATION_ID, USER, SCHEMA, CLIENT),
    SESSION_END(2, SESSION_ID, TIME),
    CHANGE_USER(3, SESSION_ID, TIME, USER, SCHEMA),
    COMMAND(4, SESSION_ID, TIME, DURATION, COMMAND_BYTE, OUTCOME, ERROR_CODE, AFFECTED_ROWS, ROWS, STATEMENT_ID,
            TRUNCATED, PAYLOAD),
    /** The last record of a file closed cleanly. */
    FILE_END(0x7F, RECORDS_IN_FILE);

    private static final RecordKind[] BY_TYPE = new RecordKind[256];

    static {
        for (RecordKind kind : values()) {
            BY_TYPE[kind.type] = kind;
        }
    }

    /** The type byte that starts the record. */
    final int type;
    /** The body's fields, in file order. */
    private final RecordField[] fields;

    RecordKind(int type, RecordField... fields) {
        this.type = type;
        this.fields = fields;
    }

    /** The body's fields, in file order (shared: not to be changed). */
    RecordField[] fields() {
        return fields;
    }

    /** The kind of type byte {@code type} (0 to 255), or {@code null} for a type no version defines. */
    static RecordKind ofType(int type) {
        return BY_TYPE[type];
    }
}
