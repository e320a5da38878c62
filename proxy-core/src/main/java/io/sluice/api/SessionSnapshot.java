package io.sluice.api;

/**
 * One client session as the admin API shows it ({@code GET /api/sessions?verbose}).
 *
 * @param id the connection id the client saw in the greeting
 * @param user the proxy user, {@code null} before login
 * @param client the client's address
 * @param backend the data source the session is assigned to, {@code null} before login
 * @param schema the schema it uses on that backend, or {@code null}
 * @param state {@code login}, {@code idle}, {@code running}, {@code in_transaction} or {@code closing}
 * @param connectedAtMillis when it connected, in milliseconds since the epoch
 * @param pinnedBy with {@code pooling: TRANSACTION}, why the session keeps its backend connection between
 *     transactions (a pin reason in lower case, such as {@code user_variable}); {@code null} when it is
 *     not pinned, and always in SESSION pooling
 * @param moves how many times the session moved to another backend (transaction pooling)
 * @param moveWaiting why a move asked for waits for the session to let its connection go ({@code drain},
 *     {@code down}, {@code rebalance}), or {@code null}
 * @param account the server account the session's backend connections log in as (its {@code backendUser}, its own
 *     account with {@code users: FROM_BACKEND}, or the data source's {@code username}); {@code null} before login
 */
public record SessionSnapshot(int id, String user, String client, String backend, String schema, String state,
        long connectedAtMillis, String pinnedBy, int moves, String moveWaiting, String account) {

    /** A session whose server account is not known. */
    public SessionSnapshot(int id, String user, String client, String backend, String schema, String state,
            long connectedAtMillis, String pinnedBy, int moves, String moveWaiting) {
        this(id, user, client, backend, schema, state, connectedAtMillis, pinnedBy, moves, moveWaiting, null);
    }

    /** A session that is not pinned and never moved. */
    public SessionSnapshot(int id, String user, String client, String backend, String schema, String state,
            long connectedAtMillis) {
        this(id, user, client, backend, schema, state, connectedAtMillis, null, 0, null);
    }

    /** A session that never moved. */
    public SessionSnapshot(int id, String user, String client, String backend, String schema, String state,
            long connectedAtMillis, String pinnedBy) {
        this(id, user, client, backend, schema, state, connectedAtMillis, pinnedBy, 0, null);
    }
}
