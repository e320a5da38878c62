package io.sluice.protocol;

/**
 * Bytes that do not follow the MySQL protocol. Messages follow the form {@code field: value (expected: bound)}.
 * A client that causes one gets an ERR packet or a clean close; a backend that causes one is closed, never pooled.
 */
public class ProtocolException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ProtocolException(String message) {
        super(message);
    }
}
