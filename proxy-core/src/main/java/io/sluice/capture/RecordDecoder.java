package io.sluice.capture;

import java.io.EOFException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * Decodes the records {@link RecordEncoder} wrote, one at a time from a block's content, by walking the same
 * {@link RecordKind} table. Not thread-safe: one per reader.
 */
final class RecordDecoder {
    private final RecordValues values = new RecordValues();

    /**
     * Decodes the record at {@code block}'s position (a little-endian buffer) and moves past it.
     *
     * @return the record, or {@code null} for the end-of-file record
     * @throws EOFException when the record's type is unknown, its length goes past the block, or a value is out of
     *     range; a {@link RuntimeException} ({@link java.nio.BufferUnderflowException}...) when its fields go past
     *     its body
     */
    CaptureRecord decode(ByteBuffer block) throws EOFException {
        int type = block.get() & 0xFF;
        int length = block.getInt();
        if (length < 0 || length > block.remaining()) {
            throw new EOFException("record length " + length + " past the block's end");
        }
        ByteBuffer body = block.slice(block.position(), length).order(ByteOrder.LITTLE_ENDIAN);
        block.position(block.position() + length);
        RecordKind kind = RecordKind.ofType(type);
        if (kind == null) {
            throw new EOFException("record type " + type + " unknown");
        }
        for (RecordField field : kind.fields()) {
            switch (field.wire) {
                case U8 -> values.set(field, body.get() & 0xFF);
                case U16 -> values.set(field, body.getShort() & 0xFFFF);
                case U32 -> values.set(field, body.getInt() & 0xFFFFFFFFL);
                case U64 -> values.set(field, body.getLong());
                case STR -> values.set(field, str(body));
                case BYTES -> values.set(field, bytes(body));
            }
        }
        try {
            return values.record(kind);
        } finally {
            values.release();
        }
    }

    private static byte[] bytes(ByteBuffer body) throws EOFException {
        byte[] b = new byte[checkedLength(body, body.getInt())];
        body.get(b);
        return b;
    }

    private static String str(ByteBuffer body) throws EOFException {
        int length = body.getInt();
        if (length == -1) {
            return null;
        }
        byte[] b = new byte[checkedLength(body, length)];
        body.get(b);
        return new String(b, StandardCharsets.UTF_8);
    }

    /**
     * A value's length, checked against what is left of the record before anything is allocated: a damaged length
     * field (2 GiB) must be a format error, not an OutOfMemoryError.
     */
    private static int checkedLength(ByteBuffer body, int length) throws EOFException {
        if (length < 0 || length > body.remaining()) {
            throw new EOFException("value length " + (length & 0xFFFFFFFFL) + " past the record's end ("
                    + body.remaining() + " bytes left)");
        }
        return length;
    }
}
