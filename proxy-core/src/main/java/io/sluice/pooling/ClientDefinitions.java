package io.sluice.pooling;

import io.sluice.relay.ResponseObserver;
import io.sluice.relay.ResponseTracker;
import io.sluice.state.PreparedStatement;

/**
 * Records the column definitions a session's client receives for one prepared statement, as a digest (MariaDB's
 * metadata caching, decision 062, in session pooling; issue #31), at each execute whose result carries them; the
 * prepare's own are recorded where the prepare is. MariaDB leaves them out of an execute when that connection last
 * sent the same ones, and the client then decodes rows with what it last received: a session may move only to a
 * server whose definitions are those ({@link MetadataCheck}). One per statement, made at its prepare and passed with
 * each of its executes: nothing is allocated per execute.
 */
final class ClientDefinitions implements ResponseObserver, PreparedStatement.DefinitionsFollower {
    /** {@code null} until the prepare's answer names the statement (MariaDB sends an execute right behind it). */
    private PreparedStatement statement;

    /** The observer of {@code statement}'s executes, or {@code null} when its definitions are not followed. */
    static ClientDefinitions of(PreparedStatement statement) {
        return statement.definitionsFollower() instanceof ClientDefinitions follower ? follower : null;
    }

    /**
     * The prepare was answered with definitions of digest {@code definitions}: they are the client's for
     * {@code prepared}, whose executes this observes from now on.
     */
    ClientDefinitions follow(PreparedStatement prepared, long definitions) {
        statement = prepared;
        prepared.definitionsFollower(this);
        prepared.preparedWithDefinitions(definitions);
        return this;
    }

    @Override
    public boolean digestsDefinitions() {
        return true;
    }

    @Override
    public boolean requiresDefinitions() {
        return statement != null && statement.definitionsExpected();
    }

    @Override
    public void onResponse(ResponseTracker tracker) {
        if (statement != null && tracker.outcome().definitionsSent()) {
            statement.clientDefinitions(tracker.outcome().definitionsDigest());
            statement.definitionsExpected(false);
        } // else MariaDB left them out (the client keeps what it had), or the prepare ahead failed
    }
}
