package io.sluice.backend;

import io.sluice.state.SessionVariables;
import io.sluice.state.StatementCache;
import io.sluice.state.TrackerDefaults;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * What the server session of one backend connection holds, as far as Sluice knows it: the schema, the character sets
 * and handshake variables it had at login, the variables sessions have set on it since, its prepared statements, and
 * whether a session changed something no check can see. Lives on the connection's event loop.
 */
public final class ConnectionState {
    private final boolean tracksState;
    private final StatementCache statements;
    private final SessionVariables variables = new SessionVariables();
    /** The handshake variables' values at login, to return to them. */
    private final Map<String, String> loginValues = new HashMap<>(8);
    private String schema;
    /** {@code client/connection/results/collation} at login: a reset must give the same back. */
    private String characterSets;
    /** MariaDB's current role at login ("" for none; {@code null} on MySQL): a reset must give the same back. */
    private String role;
    private boolean tainted;
    /** A statement left warnings or an error here since the last reset (see {@link #diagnosticsLeft()}). */
    private boolean diagnostics;
    private TrackerDefaults trackerDefaults;
    /** The server is MySQL (its greeting said so): GTID sets and {@code WAIT_FOR_EXECUTED_GTID_SET}, not MariaDB's. */
    private boolean mySql;
    /**
     * A replica's connection: its session is {@code READ ONLY} from login, and again after every reset, and never
     * lent while that is not known (decision 110). Once set it stays set for the connection's life.
     */
    private boolean readOnly;

    /**
     * @param tracksState whether the server reports state changes in OK packets (transaction pooling)
     * @param statementCacheSize prepared statements kept per connection mapped by Sluice (transaction pooling, a
     *     session-pooling session that moved); 0 for none
     */
    public ConnectionState(String schema, boolean tracksState, int statementCacheSize) {
        this.schema = schema;
        this.tracksState = tracksState;
        this.statements = statementCacheSize > 0 ? new StatementCache(statementCacheSize) : null;
    }

    /** Whether the server reports session state changes on this connection (transaction pooling). */
    public boolean tracksState() {
        return tracksState;
    }

    /**
     * Whether the server is MySQL rather than MariaDB, as its greeting said: its sessions report their GTIDs with
     * {@code session_track_gtids} (a GTID set), and a causal read waits with {@code WAIT_FOR_EXECUTED_GTID_SET}.
     */
    public boolean isMySql() {
        return mySql;
    }

    /** The greeting said which server this is; set before the post-login commands are chosen. */
    void mySql(boolean isMySql) {
        mySql = isMySql;
    }

    /**
     * Whether this connection serves a read/write split group's replica: its server session runs
     * {@code SET SESSION TRANSACTION READ ONLY} after login and after every COM_RESET_CONNECTION, the session check
     * verifies it, and session variables never carry the access mode to it ({@link SessionVariables#ACCESS_MODE}).
     */
    public boolean readOnly() {
        return readOnly;
    }

    /**
     * Marks the connection a replica's, for good: set before login by its pool, or by a split session that found an
     * older connection of a data source that became a replica (config reload) once it made the session read-only.
     */
    public void readOnly(boolean replica) {
        readOnly |= replica;
    }

    /**
     * The connection's data source became its group's primary (issue #40) and its session ran
     * {@link SetSessionVariables#READ_WRITE}: from now on it is a primary's connection, reset without READ ONLY.
     */
    public void readWrite() {
        readOnly = false;
    }

    /** The schema the server has selected, as last known; {@code null} for none. */
    public String schema() {
        return schema;
    }

    /** The session on this connection changed schema (the schema tracker said so, or COM_INIT_DB succeeded). */
    public void schema(String newSchema) {
        schema = newSchema;
    }

    /** What sessions have set here since login or the last reset, as the trackers reported it. */
    public SessionVariables variables() {
        return variables;
    }

    /** The handshake variables' values at login. */
    public Map<String, String> loginValues() {
        return loginValues;
    }

    /** This connection's prepared statements, as Sluice mapped them; {@code null} for a health check's connection. */
    public StatementCache statements() {
        return statements;
    }

    /**
     * Marks a change the reset check cannot verify, such as COM_SET_OPTION switching multi-statements: the connection
     * is closed instead of pooled when its session ends.
     */
    public void taint() {
        tainted = true;
    }

    public boolean isTainted() {
        return tainted;
    }

    /**
     * A statement left warnings or an error on this connection: MariaDB keeps them for {@code SHOW WARNINGS} through
     * any later statement that uses no table, so only a reset is sure to clear them for the next session.
     */
    public void diagnosticsLeft() {
        diagnostics = true;
    }

    /** Whether a statement left warnings or an error here since the last reset. */
    public boolean holdsDiagnostics() {
        return diagnostics;
    }

    /**
     * Takes in the session check row read right after login: the schema, and the character sets and handshake
     * variables a reset must give back.
     *
     * @return false when a replica's connection is not read-only: it must not be used
     */
    boolean loggedIn(SessionCheck.Row row) {
        if (readOnly && !row.readOnly()) {
            return false;
        }
        schema = row.schema();
        trackerDefaults = row.trackerDefaults();
        characterSets = row.characterSets();
        role = row.role();
        loginValues.putAll(row.handshakeVariables());
        return true;
    }

    /**
     * Takes in the session check row read after COM_RESET_CONNECTION.
     *
     * @return whether the connection is as it was at login (same character sets, same role, and read-only for a
     *     replica's); when it is, what sessions set on it is forgotten
     */
    boolean reset(SessionCheck.Row row) {
        if (!row.characterSets().equals(characterSets) || !Objects.equals(row.role(), role)
                || readOnly && !row.readOnly()) {
            return false;
        }
        schema = row.schema();
        variables.clear();
        diagnostics = false;
        // COM_RESET_CONNECTION gives sql_mode its global value, not the login's (IGNORE_SPACE for a client with
        // CLIENT_IGNORE_SPACE, issue #38): recorded as what the connection holds, the next session's SET restores it.
        for (Map.Entry<String, String> value : row.handshakeVariables().entrySet()) {
            if (!Objects.equals(value.getValue(), loginValues.get(value.getKey()))) {
                variables.put(value.getKey(), value.getValue());
            }
        }
        if (statements != null) {
            statements.clear();
        }
        return true;
    }

    /**
     * The trackers a client's own connection to this server would start with, read at login when the connection
     * follows session state; else {@code null}.
     */
    public TrackerDefaults trackerDefaults() {
        return trackerDefaults;
    }

    /** The character sets at login, for log lines. */
    String characterSets() {
        return characterSets;
    }
}
