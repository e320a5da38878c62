package io.sluice.frontend;

import io.netty.buffer.ByteBuf;
import io.sluice.backend.BackendConnection;
import io.sluice.capture.CaptureRun;
import io.sluice.capture.SessionCapture;
import io.sluice.capture.TrafficCapture;
import io.sluice.relay.ResponseObserver;

/**
 * Where a session meets traffic capture: one volatile read per command while no capture runs (decision 030). When a
 * capture starts, the session joins it at its next command that finds nothing outstanding, so that every recorded
 * command gets its own response; when it stops, or the session ends, commands still unanswered are recorded with an
 * unknown outcome.
 */
final class CaptureHook {
    private final TrafficCapture capture;
    private final ClientSession session;
    /** This session's capture, while one runs and has seen the session. */
    private SessionCapture captured;

    CaptureHook(TrafficCapture capture, ClientSession session) {
        this.capture = capture;
        this.session = session;
    }

    /**
     * The session logged in: with a capture running and nothing held back, it is captured from its first command.
     */
    void loggedIn(boolean idle, BackendConnection connection) {
        CaptureRun run = capture.run();
        if (run != null && idle) {
            captured = begin(run, false, connection);
        }
    }

    /**
     * A command is about to be forwarded (borrowed frame).
     *
     * @param connection the connection held now, or {@code null}
     * @param idle whether nothing of the session's is outstanding or held back
     * @return the command's record for its response, or {@code null} when the session is not captured
     */
    ResponseObserver onCommand(int command, ByteBuf frame, BackendConnection connection, boolean idle) {
        CaptureRun run = capture.run(); // the one volatile read capture costs when off
        if (run == null && captured == null) {
            return null;
        }
        if (captured != null && captured.run() != run) {
            end(connection);
        }
        if (run != null && captured == null && idle) {
            captured = begin(run, true, connection);
        }
        return captured == null ? null : captured.onCommand(command, frame);
    }

    /** A connection was bound: it sums its responses up while the session is captured. */
    void bound(BackendConnection connection) {
        if (captured != null && connection != null) { // null: a session that logs in without a connection yet
            connection.summarizeResponses(true);
        }
    }

    /** COM_CHANGE_USER succeeded: commands unanswered ended with the old session's user. */
    void changedUser(BackendConnection connection, String user, String schema) {
        if (captured != null) {
            if (connection != null) {
                connection.endCapture();
                connection.summarizeResponses(true);
            }
            captured.onChangeUser(user, schema);
        }
    }

    /** The session, or the capture, ended. */
    void end(BackendConnection connection) {
        if (captured != null) {
            if (connection != null) {
                connection.endCapture();
            }
            captured.end();
            captured = null;
        }
    }

    private SessionCapture begin(CaptureRun run, boolean openBefore, BackendConnection connection) {
        SessionCapture begun = run.beginSession(session.connectionId(), session.user(), session.schema(),
                session.key().capabilities(), session.key().collationId(),
                String.valueOf(session.remoteAddress()), openBefore);
        if (connection != null) {
            connection.summarizeResponses(true);
        }
        return begun;
    }
}
