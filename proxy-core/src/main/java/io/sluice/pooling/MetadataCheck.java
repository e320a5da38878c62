package io.sluice.pooling;

import io.sluice.backend.BackendConnection;
import io.sluice.backend.BackendException;
import io.sluice.backend.PrepareStatement;
import io.sluice.protocol.Packets.BackendError;
import io.sluice.state.PreparedStatement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Before a session-pooling session moves with MariaDB's metadata caching (decision 062; issue #31): prepares its
 * statements on the connection it is to move to, at once rather than at their first execute, and checks that the new
 * server answers with the column definitions the client last received for each. MariaDB leaves the definitions out
 * of an execute when that connection last sent the same ones, and it takes Sluice's prepare for such a sending: had
 * the table changed in between (an {@code ALTER TABLE}, or backends whose schemas differ), the client would decode
 * the new server's rows with the old server's definitions, silently. The statements prepared are put into the
 * connection's statement cache, where the session's executes find them after the move.
 */
public final class MetadataCheck {

    /** What the check found; on the target connection's event loop. */
    public interface Outcome {
        /**
         * Every statement answers there with the definitions its client has, or will send them with its next
         * result: the session may move. Those of the second kind are to {@link #expectDefinitions expect} them once it
         * moved.
         */
        void same(List<PreparedStatement> sendingDefinitions);

        /**
         * A statement does not: it answers with other definitions, or does not prepare there at all (its table is
         * missing). The session must stay; the connection has its statements and goes to no one else.
         */
        void differs(String sql);

        /** The connection broke. */
        void lost(BackendException cause);
    }

    /** The server's own error for a statement whose result columns changed since the client prepared it. */
    static final int ER_NEED_REPREPARE = 1615;

    private final BackendConnection target;
    private final Outcome outcome;
    /** The statements, by text: each text is prepared once, its definitions compared with every statement's. */
    private final Map<String, List<PreparedStatement>> byText = new HashMap<>();
    private final List<PreparedStatement> sending = new ArrayList<>();
    private int waiting;
    private String differs;
    private BackendException lost;

    private MetadataCheck(BackendConnection target, Outcome outcome) {
        this.target = target;
        this.outcome = outcome;
    }

    /**
     * Whether {@code policy}'s session needs the check on {@code target}: it negotiated metadata caching and has
     * statements open.
     */
    public static boolean needed(CommandPolicy policy, BackendConnection target) {
        return policy instanceof SessionPooling statements && target.key().cacheMetadata()
                && !statements.statements().isEmpty();
    }

    /** Prepares the session's statements on {@code target}, between commands, and tells {@code outcome}. */
    public static void run(SessionPooling statements, BackendConnection target, Outcome outcome) {
        MetadataCheck check = new MetadataCheck(target, outcome);
        for (PreparedStatement statement : statements.statements()) {
            check.byText.computeIfAbsent(statement.sql(), sql -> new ArrayList<>(1)).add(statement);
        }
        List<PrepareStatement> prepares = new ArrayList<>(check.byText.size());
        for (Map.Entry<String, List<PreparedStatement>> text : check.byText.entrySet()) {
            prepares.add(check.prepare(text.getKey(), text.getValue()));
        }
        check.waiting = prepares.size();
        target.run(prepares.toArray(PrepareStatement[]::new));
    }

    /** What a server whose prepare of {@code statement} answered with {@code definitions} will do for its client. */
    enum Verdict {
        /** Answers with the definitions the client has: whether it sends them or not, the client reads right. */
        SAME,
        /**
         * Answers the prepare as the client's own server did when the client prepared it, whose executes then sent
         * other definitions (result columns that depend on the parameters' types, {@code SELECT ? * 2}): the new
         * server will send them too, at the first execute. Not leaving them out is then checked as it runs.
         */
        SENDS,
        /** Answers with definitions the client does not have, which it may leave out of an execute: no move. */
        DIFFERS
    }

    static Verdict judge(PreparedStatement statement, long definitions) {
        if (!statement.clientDefinitionsKnown()) {
            return Verdict.DIFFERS; // recorded before it could be read: the safe side
        } else if (statement.clientDefinitions() == definitions) {
            return Verdict.SAME;
        } else if (statement.preparedDefinitions() == definitions
                && statement.clientDefinitions() != statement.preparedDefinitions()) {
            return Verdict.SENDS;
        }
        return Verdict.DIFFERS;
    }

    /** After the move: the statements whose next result must carry definitions say so to the tracker. */
    public static void expectDefinitions(List<PreparedStatement> sendingDefinitions) {
        for (PreparedStatement statement : sendingDefinitions) {
            statement.definitionsExpected(true);
        }
    }

    /** The error an execute gets whose statement answers with definitions its client does not have. */
    static BackendError needsReprepare() {
        return new BackendError(ER_NEED_REPREPARE, "HY000", "Prepared statement needs to be re-prepared: its result"
                + " columns changed since the client received them (Sluice, MariaDB metadata caching)");
    }

    private PrepareStatement prepare(String sql, List<PreparedStatement> statements) {
        PrepareStatement[] own = new PrepareStatement[1];
        own[0] = new PrepareStatement(sql, new PrepareStatement.Outcome() {
            @Override
            public void prepared(int serverId, int parameters) {
                long definitions = own[0].definitions();
                for (PreparedStatement statement : statements) {
                    Verdict verdict = judge(statement, definitions);
                    if (verdict == Verdict.DIFFERS) {
                        differs = differs == null ? sql : differs;
                    } else if (verdict == Verdict.SENDS) {
                        sending.add(statement);
                    }
                }
                target.state().statements().put(sql, serverId, parameters, target::closeStatement);
                answered();
            }

            @Override
            public void failed(BackendException refusal) {
                if (refusal.serverError() == null) {
                    lost = lost == null ? refusal : lost;
                } else {
                    differs = differs == null ? sql : differs; // no such columns there at all
                }
                answered();
            }
        });
        return own[0];
    }

    private void answered() {
        if (--waiting > 0) {
            return;
        }
        if (lost != null) {
            outcome.lost(lost);
        } else if (differs != null) {
            outcome.differs(differs);
        } else {
            outcome.same(sending);
        }
    }
}
