package io.sluice.isolation;

import io.sluice.testing.Trace;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs an interleaving's steps on one endpoint, each session on a connection of its own, and records what each step
 * observed (rows with their metadata, update counts, generated keys, warnings, error codes and messages) as text.
 */
final class StepRunner implements AutoCloseable {

    /** Opens the connection of a session: straight to the server, or through Sluice. */
    @FunctionalInterface
    interface Sessions {
        Connection open(int session) throws SQLException;
    }

    private final Sessions sessions;
    private final IsolationSchema schema;
    private final Connection[] connections;

    StepRunner(Sessions sessions, int count, IsolationSchema schema) {
        this.sessions = sessions;
        this.schema = schema;
        this.connections = new Connection[count];
    }

    /** Logs every session in (before the first step, so that logins do not interleave with the steps). */
    StepRunner open() throws SQLException {
        for (int i = 0; i < connections.length; i++) {
            connections[i] = sessions.open(i);
        }
        return this;
    }

    /** What each step observed, in order. */
    List<String> run(List<Step> steps) {
        List<String> observed = new ArrayList<>(steps.size());
        for (Step step : steps) {
            observed.add(run(step));
        }
        return observed;
    }

    /** Runs one step and returns what it observed. */
    String run(Step step) {
        Trace trace = new Trace();
        try {
            if (step.action() == Step.Action.RECONNECT) {
                connections[step.session()].close();
                connections[step.session()] = sessions.open(step.session());
                trace.add("reconnected", true);
            } else {
                execute(connection(step.session()), step, schema, trace);
            }
        } catch (SQLException e) {
            trace.error(e);
        }
        return trace.toString().strip();
    }

    /** The session's connection; a broken one (the step before lost it) is replaced, and that is recorded. */
    Connection connection(int session) throws SQLException {
        if (connections[session] == null || connections[session].isClosed()) {
            connections[session] = sessions.open(session);
        }
        return connections[session];
    }

    private static void execute(Connection c, Step step, IsolationSchema schema, Trace trace) throws SQLException {
        String sql = step.sql(schema);
        if (step.action() == Step.Action.MAKE && step.way() == Way.SERVER_PREPARED
                || step.action() == Step.Action.PROBE && sql.startsWith(StateKind.PREPARED)) {
            trace.add("prepared", sql);
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                trace.results(ps, ps.execute());
            } catch (SQLException e) {
                trace.error(e);
            }
        } else {
            try (Statement s = c.createStatement()) {
                trace.execute(s, sql);
            }
        }
    }

    /** Runs {@code step} once on {@code c}: null when it worked, else the error (code and message). */
    static String tryOnce(Connection c, Step step, IsolationSchema schema) {
        Trace trace = new Trace();
        try {
            execute(c, step, schema, trace);
        } catch (SQLException e) {
            trace.error(e);
        }
        for (Object event : trace.events()) {
            if (event instanceof Trace.Error error) {
                return error.code() + " " + error.message();
            }
        }
        return null;
    }

    @Override
    public void close() {
        for (Connection c : connections) {
            if (c != null) {
                try {
                    c.close();
                } catch (SQLException ignored) {
                    // closing is all that is left to do with it
                }
            }
        }
    }
}
