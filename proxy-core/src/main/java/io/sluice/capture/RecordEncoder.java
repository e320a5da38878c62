package io.sluice.capture;

import io.sluice.capture.CaptureRecord.CommandRecord;
import io.sluice.capture.CaptureRecord.Outcome;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Encodes records, in the file's record format ({@link RecordKind}), into a growing byte array: a
 * {@link RecordBuffer}'s records on the relay thread that produces them, and the writer's block, which it fills with
 * those buffers' bytes. {@link RecordDecoder} reads them back.
 *
 * <p>Allocation-light because it runs on event loops (decision 053): the array is reused until handed over, the
 * field values go through one reused {@link RecordValues}, and only a string field's UTF-8 bytes are allocated.
 * Not thread-safe: each has one owner.
 */
final class RecordEncoder {
    /** Little-endian views of a byte array: one store per field. */
    private static final VarHandle INT_LE = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle LONG_LE =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private final int initialCapacity;
    private final RecordValues values = new RecordValues();
    private byte[] buf;
    private int size;
    private int records;

    RecordEncoder(int initialCapacity) {
        this.initialCapacity = initialCapacity;
        this.buf = new byte[initialCapacity];
    }

    /** Bytes encoded so far. */
    int size() {
        return size;
    }

    /** Records encoded so far (the end-of-file record does not count). */
    int records() {
        return records;
    }

    /** The array the records are encoded in: its first {@link #size()} bytes count. */
    byte[] bytes() {
        return buf;
    }

    /** Starts again, keeping the array. */
    void clear() {
        size = 0;
        records = 0;
    }

    /**
     * Hands over the encoded bytes (the array itself, of which the first {@link #size()} bytes count) and starts
     * again with a new array: the producing thread's buffer goes to the writer without being copied.
     */
    byte[] detach() {
        byte[] detached = buf;
        buf = new byte[initialCapacity];
        clear();
        return detached;
    }

    /** Appends {@code length} bytes of records another encoder encoded. */
    void append(byte[] encoded, int length, int recordCount) {
        ensure(length);
        System.arraycopy(encoded, 0, buf, size, length);
        size += length;
        records += recordCount;
    }

    /** Encodes a command record from its fields, without a {@link CommandRecord} (the relay's path). */
    void addCommand(int sessionId, long timeNanos, long durationNanos, int command, byte[] payload,
            boolean truncated, Outcome outcome, int errorCode, long affectedRows, long rows, long statementId) {
        values.command(sessionId, timeNanos, durationNanos, command, payload, truncated, outcome, errorCode,
                affectedRows, rows, statementId);
        records++;
        write(RecordKind.COMMAND);
    }

    /** Encodes a record. */
    void add(CaptureRecord record) {
        RecordKind kind = values.of(record);
        records++;
        write(kind);
    }

    /** Encodes the record that ends a file closed cleanly. */
    void fileEnd(long recordsInFile) {
        values.set(RecordField.RECORDS_IN_FILE, recordsInFile);
        write(RecordKind.FILE_END);
    }

    /** {@code u8 type, u32 body length, body}: the body is the kind's fields, in the kind's order. */
    private void write(RecordKind kind) {
        u8(kind.type);
        int lengthAt = size;
        u32(0); // the body length, patched below
        for (RecordField field : kind.fields()) {
            switch (field.wire) {
                case U8 -> u8((int) values.number(field));
                case U16 -> u16((int) values.number(field));
                case U32 -> u32((int) values.number(field));
                case U64 -> u64(values.number(field));
                case STR -> str(values.string(field));
                case BYTES -> bytes(values.bytes(field));
            }
        }
        INT_LE.set(buf, lengthAt, size - lengthAt - 4);
        values.release();
    }

    private void ensure(int more) {
        if (size + more > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, size + more));
        }
    }

    private void u8(int v) {
        ensure(1);
        buf[size++] = (byte) v;
    }

    private void u16(int v) {
        ensure(2);
        buf[size++] = (byte) v;
        buf[size++] = (byte) (v >>> 8);
    }

    private void u32(int v) {
        ensure(4);
        INT_LE.set(buf, size, v);
        size += 4;
    }

    private void u64(long v) {
        ensure(8);
        LONG_LE.set(buf, size, v);
        size += 8;
    }

    private void bytes(byte[] b) {
        u32(b.length);
        ensure(b.length);
        System.arraycopy(b, 0, buf, size, b.length);
        size += b.length;
    }

    private void str(String s) {
        if (s == null) {
            u32(-1);
        } else {
            bytes(s.getBytes(StandardCharsets.UTF_8));
        }
    }
}
