package io.sluice.state;

/**
 * A statement a client prepared, under the id Sluice gave it: what it takes to prepare it again on whichever backend
 * connection the session uses next.
 */
public final class PreparedStatement {
    private final int clientId;
    private final String sql;
    /** Its parameter count, once the server has prepared it; -1 while the first prepare is in flight. */
    private int parameters = -1;
    /** The parameter types of the last execute that sent them (2 bytes each), or {@code null} before one did. */
    private byte[] parameterTypes;

    /**
     * @param sql the statement text, as ISO-8859-1 so that it keeps the client's bytes whatever their charset
     */
    public PreparedStatement(int clientId, String sql) {
        this.clientId = clientId;
        this.sql = sql;
    }

    public int clientId() {
        return clientId;
    }

    /** The statement text; see the constructor for its encoding. It is also the key of the backend cache. */
    public String sql() {
        return sql;
    }

    /** Whether the server has answered its first prepare (a pipelined execute must wait for that answer). */
    public boolean isPrepared() {
        return parameters >= 0;
    }

    /** The server prepared it: it has this many parameters. */
    public void prepared(int parameterCount) {
        this.parameters = parameterCount;
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
