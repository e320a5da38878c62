package io.sluice.isolation;

/**
 * One step of an interleaving: a session makes a state by some way, runs a probe of a kind, ends a state, or
 * reconnects. {@code n} is the step's own number, so that what one step wrote is told from what another wrote.
 *
 * @param session which session, from 0
 * @param action what it does
 * @param kind the state kind (null for {@link Action#RECONNECT})
 * @param way how a {@link Action#MAKE} reaches the server (null otherwise)
 * @param probe which of the kind's probes a {@link Action#PROBE} runs
 * @param n the number the statement carries
 */
record Step(int session, Action action, StateKind kind, Way way, int probe, int n) {

    enum Action { MAKE, PROBE, END, RECONNECT }

    static Step make(int session, StateKind kind, Way way, int n) {
        return new Step(session, Action.MAKE, kind, way, 0, n);
    }

    /** The SQL text the step sends (a server-side prepared statement sends it with COM_STMT_PREPARE). */
    String sql(IsolationSchema schema) {
        return switch (action) {
            case MAKE -> schema.makeSql(kind, way, n);
            case PROBE -> schema.render(kind.probes().get(probe), Integer.toString(n));
            case END -> schema.render(kind.end(), Integer.toString(n));
            case RECONNECT -> null;
        };
    }

    /** One line a failure message shows, and that a reader can replay by hand. */
    String describe(IsolationSchema schema) {
        String who = "s" + session;
        return switch (action) {
            case MAKE -> who + " MAKE  " + kind + " via " + way + ": " + sql(schema);
            case PROBE -> who + " PROBE " + kind + ": " + sql(schema);
            case END -> who + " END   " + kind + ": " + sql(schema);
            case RECONNECT -> who + " RECONNECT";
        };
    }
}
