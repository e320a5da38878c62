package io.sluice.multiplexing;

/**
 * A statement a client prepared, under the id Sluice gave it: what it takes to prepare it again on whichever backend
 * connection the session uses next.
 */
public final class PreparedStatement {
    private final int clientId;
    private final String sql;
    private final int parameters;
    /** The parameter types of the last execute that sent them (2 bytes each), or {@code null} before one did. */
    private byte[] parameterTypes;

    /**
     * @param sql the statement text, as ISO-8859-1 so that it keeps the client's bytes whatever their charset
     */
    public PreparedStatement(int clientId, String sql, int parameters) {
        this.clientId = clientId;
        this.sql = sql;
        this.parameters = parameters;
    }

    public int clientId() {
        return clientId;
    }

    /** The statement text; see the constructor for its encoding. It is also the key of the backend cache. */
    public String sql() {
        return sql;
    }

    public int parameters() {
        return parameters;
    }

    public byte[] parameterTypes() {
        return parameterTypes;
    }

    public void parameterTypes(byte[] types) {
        this.parameterTypes = types;
    }
}
