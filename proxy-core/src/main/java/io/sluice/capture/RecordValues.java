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
import static io.sluice.capture.RecordField.ROWS;
import static io.sluice.capture.RecordField.SCHEMA;
import static io.sluice.capture.RecordField.SESSION_ID;
import static io.sluice.capture.RecordField.STATEMENT_ID;
import static io.sluice.capture.RecordField.TIME;
import static io.sluice.capture.RecordField.TRUNCATED;
import static io.sluice.capture.RecordField.USER;

import io.sluice.capture.CaptureRecord.ChangeUser;
import io.sluice.capture.CaptureRecord.CommandRecord;
import io.sluice.capture.CaptureRecord.Outcome;
import io.sluice.capture.CaptureRecord.SessionBegin;
import io.sluice.capture.CaptureRecord.SessionEnd;
import java.io.EOFException;
import java.util.Arrays;

/**
 * One record's values by {@link RecordField}, on their way between a {@link CaptureRecord} and the file: the one
 * place that says which of a record's components goes in which field, both ways. {@link RecordEncoder} fills them
 * from a record (or, on the relay's path, straight from a command's fields) and writes them in {@link RecordKind}'s
 * order; {@link RecordDecoder} reads them in that order and makes the record.
 *
 * <p>Reused from record to record by its one owner, so that encoding allocates nothing here. Not thread-safe.
 */
final class RecordValues {
    private static final int FIELDS = RecordField.values().length;
    private static final Outcome[] OUTCOMES = Outcome.values();

    /** The integer fields, unsigned as read from the file. */
    private final long[] numbers = new long[FIELDS];
    /** The {@code STR} fields as {@code String}, the {@code BYTES} fields as {@code byte[]}. */
    private final Object[] objects = new Object[FIELDS];

    long number(RecordField field) {
        return numbers[field.ordinal()];
    }

    String string(RecordField field) {
        return (String) objects[field.ordinal()];
    }

    byte[] bytes(RecordField field) {
        return (byte[]) objects[field.ordinal()];
    }

    RecordValues set(RecordField field, long value) {
        numbers[field.ordinal()] = value;
        return this;
    }

    /** A {@code STR} field's string (or {@code null}), or a {@code BYTES} field's bytes. */
    RecordValues set(RecordField field, Object value) {
        objects[field.ordinal()] = value;
        return this;
    }

    /** Forgets the strings and the payload, so that a reused instance keeps no command's bytes alive. */
    void release() {
        Arrays.fill(objects, null);
    }

    /** Takes a command's fields without a {@link CommandRecord} (the relay's path); see that record for each. */
    void command(int sessionId, long timeNanos, long durationNanos, int command, byte[] payload, boolean truncated,
            Outcome outcome, int errorCode, long affectedRows, long rows, long statementId) {
        set(SESSION_ID, sessionId).set(TIME, timeNanos).set(DURATION, durationNanos).set(COMMAND_BYTE, command)
                .set(PAYLOAD, payload).set(TRUNCATED, truncated ? 1 : 0).set(OUTCOME, outcome.ordinal())
                .set(ERROR_CODE, errorCode).set(AFFECTED_ROWS, affectedRows).set(ROWS, rows)
                .set(STATEMENT_ID, statementId);
    }

    /** Takes {@code record}'s values. */
    RecordKind of(CaptureRecord record) {
        if (record instanceof CommandRecord r) {
            command(r.sessionId(), r.timeNanos(), r.durationNanos(), r.command(), r.payload(), r.truncated(),
                    r.outcome(), r.errorCode(), r.affectedRows(), r.rows(), r.statementId());
            return RecordKind.COMMAND;
        }
        set(SESSION_ID, record.sessionId()).set(TIME, record.timeNanos());
        if (record instanceof SessionBegin r) {
            set(OPEN_BEFORE, r.openBefore() ? 1 : 0).set(CAPABILITIES, r.capabilities())
                    .set(COLLATION_ID, r.collationId()).set(USER, r.user()).set(SCHEMA, r.schema())
                    .set(CLIENT, r.client());
            return RecordKind.SESSION_BEGIN;
        }
        if (record instanceof ChangeUser r) {
            set(USER, r.user()).set(SCHEMA, r.schema());
            return RecordKind.CHANGE_USER;
        }
        if (record instanceof SessionEnd) {
            return RecordKind.SESSION_END;
        }
        throw new IllegalArgumentException("not a record kind of the file: " + record);
    }

    /**
     * The record these values make, or {@code null} for {@link RecordKind#FILE_END}, which is none.
     *
     * @throws EOFException when a value is out of its range (an outcome no version defines)
     */
    CaptureRecord record(RecordKind kind) throws EOFException {
        int sessionId = (int) number(SESSION_ID);
        long time = number(TIME);
        return switch (kind) {
            case SESSION_BEGIN -> new SessionBegin(sessionId, time, number(OPEN_BEFORE) != 0,
                    (int) number(CAPABILITIES), (int) number(COLLATION_ID), string(USER), string(SCHEMA),
                    string(CLIENT));
            case SESSION_END -> new SessionEnd(sessionId, time);
            case CHANGE_USER -> new ChangeUser(sessionId, time, string(USER), string(SCHEMA));
            case COMMAND -> {
                long outcome = number(OUTCOME);
                if (outcome >= OUTCOMES.length) {
                    throw new EOFException("outcome " + outcome + " unknown");
                }
                yield new CommandRecord(sessionId, time, number(DURATION), (int) number(COMMAND_BYTE),
                        bytes(PAYLOAD), number(TRUNCATED) != 0, OUTCOMES[(int) outcome], (int) number(ERROR_CODE),
                        number(AFFECTED_ROWS), number(ROWS), number(STATEMENT_ID));
            }
            case FILE_END -> null;
        };
    }
}
