package io.sluice.pooling;

import io.sluice.backend.BackendConnection;
import io.sluice.backend.SetSessionVariables;

/**
 * Where the server's {@code LAST_INSERT_ID()} is the session's own (issue #38). A connection that comes from the pool
 * holds the id of whichever session last inserted on it (no reset in between when that session was pinned by
 * nothing); Sluice answers {@code SELECT LAST_INSERT_ID()} with the session's own id instead. Code the text does not
 * show ({@code CALL}, {@code EXECUTE IMMEDIATE}, a stored function: {@link PinReason#STORED_CODE}) may generate an id
 * Sluice never sees, or read {@code LAST_INSERT_ID()} itself: before it runs, the connection is given the session's
 * id ({@code SET last_insert_id = n}), so that what the server says afterwards is the session's, true to what the code
 * did. The session stays on that connection (the pin), which is reset before anyone else gets it.
 *
 * <p>On a connection the session holds and may not let go, the assignment runs at once, before the statement (which
 * waits for it); otherwise it goes with the variables that make the next connection taken match the session.
 */
final class OwnLastInsertId {
    private final SessionPort port;
    /** The connection whose {@code LAST_INSERT_ID()} Sluice made the session's, and during which lending of it. */
    private BackendConnection on;
    private long lending;
    /** The next connection taken must be given the session's id first (the code waits for a connection). */
    private boolean wanted;

    OwnLastInsertId(SessionPort port) {
        this.port = port;
    }

    /**
     * Whether the server's {@code LAST_INSERT_ID()} on {@code held} is the session's: Sluice set it there during the
     * lending that is still going on, and only the session's statements ran there since.
     */
    boolean isOwn(BackendConnection held) {
        return held != null && held == on && held.lendings() == lending;
    }

    /**
     * A statement that runs code the text does not show is about to go to the server.
     *
     * @param held the connection the session holds now, or {@code null}
     * @param staysOnHeld whether the statement runs on {@code held}, on which no client command is under way (only
     *     Sluice's own, which it waits for): the session cannot let it go before it
     * @param id the session's own last-insert id
     */
    void beforeHiddenCode(BackendConnection held, boolean staysOnHeld, long id) {
        if (isOwn(held)) {
            return;
        }
        if (held == null || !staysOnHeld) {
            wanted = true; // a statement already under way on held cannot wait for one of Sluice's: not trusted there
            return;
        }
        on = held;
        lending = held.lendings();
        held.run(new SetSessionVariables(assignment(id), error -> {
            if (error == null) {
                port.resume(); // the statement that waited
            } else if (error.serverError() == null) {
                port.lostBackend(held, error);
            } else {
                on = null; // refused: the server's id is not the session's, LAST_INSERT_ID() is Sluice's answer
                port.resume();
            }
        }));
    }

    /**
     * For the statement that makes a connection just taken match the session: the assignment of the session's id
     * when code waits to run there, else {@code null}.
     */
    String assignmentWanted(long id) {
        return wanted ? assignment(id) : null;
    }

    /** The assignment {@link #assignmentWanted} returned was made on {@code connection}, which is lent next. */
    void assigned(BackendConnection connection) {
        wanted = false;
        on = connection;
        lending = connection.lendings() + 1; // BackendConnection.bind counts the lending that follows
    }

    /** Whether the next connection taken must be prepared: code waits to run on it. */
    boolean isWanted() {
        return wanted;
    }

    /** COM_RESET_CONNECTION or COM_CHANGE_USER: the server's id is 0 again, and so is the session's. */
    void forget() {
        on = null;
        wanted = false;
    }

    private static String assignment(long id) {
        return "SET last_insert_id = " + Long.toUnsignedString(id);
    }
}
