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
    /**
     * What the one look at the text found (its {@code SessionEffects} flags), at its prepare: each execution leaves
     * it again, so the pins it brings are applied at each execute (decision 202).
     */
    private int sniffed;
    /** Where a read/write split group runs it (a {@code StatementClassifier} class), or -2 when not known yet. */
    private int statementClass = -2;
    /** The parameter types of the last execute that sent them (2 bytes each), or {@code null} before one did. */
    private byte[] parameterTypes;
    /**
     * MariaDB's metadata caching (decision 062), in session pooling: the digest of the column definitions the client
     * last received for it (at its prepare, or an execute that carried them), and whether that is known.
     */
    private long clientDefinitions;
    private boolean clientDefinitionsKnown;
    /** The digest of those its client's own prepare answered with. */
    private long preparedDefinitions;
    /** Moved where its next result must carry its definitions: MariaDB must not leave them out. */
    private boolean definitionsExpected;
    /** What records them from each response that carries them to the client; {@code null} when nothing does. */
    private DefinitionsFollower definitionsFollower;

    /**
     * What follows, for a layer above this one, the column definitions the statement's client receives (pooling's
     * observer of its responses, which this package may not name).
     */
    public interface DefinitionsFollower {
    }

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

    /** Where a read/write split group runs the statement, as the scan at its prepare found; -2 when not known yet. */
    public int statementClass() {
        return statementClass;
    }

    /** Records the statement's class (see {@link #statementClass()}). */
    public void statementClass(int statementClass) {
        this.statementClass = statementClass;
    }

    /** What the look at the statement's text found; 0 when nothing or not looked at. */
    public int sniffed() {
        return sniffed;
    }

    public void sniffed(int flags) {
        sniffed = flags;
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

    /**
     * Whether the digest of the column definitions its client last received is known (a session-pooling session
     * with MariaDB's metadata caching records it; see {@code io.sluice.relay.ColumnDefinitionsDigest}).
     */
    public boolean clientDefinitionsKnown() {
        return clientDefinitionsKnown;
    }

    /** The digest of the column definitions its client last received; valid when {@link #clientDefinitionsKnown()}. */
    public long clientDefinitions() {
        return clientDefinitions;
    }

    /** What records the column definitions its client receives, or {@code null}: one per statement. */
    public DefinitionsFollower definitionsFollower() {
        return definitionsFollower;
    }

    public void definitionsFollower(DefinitionsFollower follower) {
        this.definitionsFollower = follower;
    }

    /** The digest of the column definitions its client's own COM_STMT_PREPARE was answered with. */
    public long preparedDefinitions() {
        return preparedDefinitions;
    }

    /** Its client's COM_STMT_PREPARE was answered with these column definitions (their digest), its first. */
    public void preparedWithDefinitions(long definitions) {
        this.preparedDefinitions = definitions;
        clientDefinitions(definitions);
    }

    /**
     * Whether its next result must carry column definitions: it moved to a server that will send them, and one
     * that left them out would leave the client with others.
     */
    public boolean definitionsExpected() {
        return definitionsExpected;
    }

    public void definitionsExpected(boolean expected) {
        this.definitionsExpected = expected;
    }

    /** The client received these column definitions for it (their digest). */
    public void clientDefinitions(long digest) {
        this.clientDefinitions = digest;
        this.clientDefinitionsKnown = true;
    }
}
