package io.sluice.capture;

/**
 * A field of a capture record and its form in the file. Which fields a record holds, and in which order, is
 * {@link RecordKind}'s to say; this is only what each one is.
 */
enum RecordField {
    SESSION_ID(Wire.U32),
    /** Nanoseconds from the capture's base: when the session began or ended, or the command arrived. */
    TIME(Wire.U64),
    /** Bit 0: the session was open before the capture saw it log in. */
    OPEN_BEFORE(Wire.U8),
    CAPABILITIES(Wire.U32),
    COLLATION_ID(Wire.U16),
    USER(Wire.STR),
    SCHEMA(Wire.STR),
    CLIENT(Wire.STR),
    DURATION(Wire.U64),
    COMMAND_BYTE(Wire.U8),
    /** {@link CaptureRecord.Outcome}'s ordinal. */
    OUTCOME(Wire.U8),
    ERROR_CODE(Wire.U16),
    AFFECTED_ROWS(Wire.U64),
    ROWS(Wire.U64),
    STATEMENT_ID(Wire.U32),
    /** Bit 0: the payload is only the start of a longer command. */
    TRUNCATED(Wire.U8),
    PAYLOAD(Wire.BYTES),
    /** The end-of-file record's count of the records before it in the file. */
    RECORDS_IN_FILE(Wire.U64);

    /** How a field is laid out; all integers are little-endian and read back unsigned. */
    enum Wire {
        U8,
        U16,
        U32,
        U64,
        /** u32 byte length (0xFFFFFFFF for null), then UTF-8 bytes. */
        STR,
        /** u32 byte length, then the bytes. */
        BYTES
    }

    final Wire wire;

    RecordField(Wire wire) {
        this.wire = wire;
    }
}
