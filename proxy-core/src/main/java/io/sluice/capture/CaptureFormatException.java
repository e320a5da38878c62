package io.sluice.capture;

import java.io.IOException;
import java.nio.file.Path;

/** A capture file that cannot be read: truncated, corrupted, of another version, or encrypted with another key. */
public final class CaptureFormatException extends IOException {
    private final Path file;
    private final long offset;

    /**
     * @param file the file at fault
     * @param offset the byte offset in that file where the damage was found (the start of the damaged block)
     */
    public CaptureFormatException(Path file, long offset, String problem) {
        super(file + ": at offset " + offset + ": " + problem);
        this.file = file;
        this.offset = offset;
    }

    public CaptureFormatException(Path file, long offset, String problem, Throwable cause) {
        this(file, offset, problem);
        initCause(cause);
    }

    public Path file() {
        return file;
    }

    public long offset() {
        return offset;
    }
}
