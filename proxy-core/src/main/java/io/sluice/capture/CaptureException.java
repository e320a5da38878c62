package io.sluice.capture;

/** A capture cannot start or stop as asked: bad options, one already running, an unusable output directory. */
public class CaptureException extends RuntimeException {

    /** Why a request was refused, so an HTTP front end can pick its status code. */
    public enum Kind {
        /** The options are invalid (unknown key, bad duration, unreadable key file). */
        INVALID,
        /** The request conflicts with the current state: a capture is already running, or none is. */
        CONFLICT,
        /** The output directory cannot be used: not writable, or not enough free space. */
        STORAGE
    }

    private final Kind kind;

    public CaptureException(Kind kind, String message) {
        super(message);
        this.kind = kind;
    }

    public CaptureException(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }
}
