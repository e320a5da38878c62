package io.sluice.frontend;

import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.backend.BackendConnection;
import io.sluice.config.QueryRuleConfig;
import io.sluice.protocol.Command;
import io.sluice.protocol.Packets;
import io.sluice.readwrite.Route;
import io.sluice.relay.ResponseKind;
import io.sluice.relay.ResponseObserver;
import io.sluice.rules.ConcurrencyLimit;
import io.sluice.rules.QueryRule;
import io.sluice.rules.SessionRules;
import io.sluice.sql.SqlDigest;
import io.sluice.statistics.SessionDigests;
import io.sluice.statistics.StatementRecord;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

/**
 * Where a session meets the query rules (issue #41 item 2, decision 166): each client command is looked at as it
 * arrives, before the session's policy and before any backend connection is taken for it. A {@code block} rule
 * answers it here; a {@code route} rule is read by the read/write splitting policy when it routes the statement
 * ({@link #routeOf}). With no rules running a command costs one volatile read; a statement no rule matches, one shape
 * hash and one probe of the loop's table of decisions.
 *
 * <p>A prepared statement is refused at its prepare, and at each execution by the SQL it was prepared with, so a rule
 * added after the prepare still holds; executions are known through the session's statement statistics (with
 * {@code statistics: off} only the prepare is checked). It also does the statistics' bookkeeping of arriving
 * commands, which must come first too, so the relay makes one call.
 */
final class RuleHook {
    /** MySQL's ER_USER_LIMIT_REACHED: what a {@code maxPerSecond} rule answers once the wait is over. */
    private static final int ER_USER_LIMIT_REACHED = 1226;
    private static final int ER_UNKNOWN_ERROR = 1105;
    private final FrontendContext context;
    private final SessionRules rules;
    private final ClientSession session;
    private final CommandRelayHandler relay;
    /** Statement statistics, or {@code null}: off. */
    private final DigestHook digests;
    /** Whether the session is in a read/write split group, where a {@code route} rule can act. */
    private final boolean split;
    /** The rule {@link #routeOf} found last, until {@link #routed} counts it. */
    private QueryRule routing;
    private final ClientReading reading;
    /** Commands that wait, in order: the first for its {@code maxPerSecond} rule's turn, the rest behind it. */
    private final ArrayDeque<Waiting> waiting = new ArrayDeque<>();
    private ScheduledFuture<?> retry;

    /** What {@link #decide} does with a command. */
    private static final int GO_ON = 0;
    private static final int TAKEN = 1;
    private static final int WAITS = 2;
    /** Goes on holding a {@code maxConcurrency} permit ({@link #permitted}): through {@link #proceed}. */
    private static final int PERMITTED = 3;
    /** How often a statement waiting for a {@code maxConcurrency} permit looks again: permits come back on any loop. */
    private static final long PERMIT_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    /** The permits of the session's {@code maxConcurrency} statements, until they end ({@link ConcurrencyPermits}). */
    private final ConcurrencyPermits permits = new ConcurrencyPermits();
    /** How often commands behind a statement a rule sent to another group look whether its connection went back. */
    private static final long VISIT_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** The permit {@link #decide} took last, for {@link #proceed}. */
    private ConcurrencyLimit.Permit permitted;
    /** The record {@link #beforeSend} gave the command it was told of last, until {@link #notSent} may drop it. */
    private StatementRecord unsent;

    /** A command held back: the first of them by {@code rule} until {@code deadline}, the others behind it. */
    private record Waiting(ByteBuf frame, int command, ResponseKind kind, ResponseObserver captured, QueryRule rule,
            long deadline, String user) {
    }

    private RuleHook(FrontendContext context, SessionRules rules, ClientSession session, CommandRelayHandler relay,
            ClientReading reading, DigestHook digests, boolean split) {
        this.context = context;
        this.reading = reading;
        this.rules = rules;
        this.session = session;
        this.relay = relay;
        this.digests = digests;
        this.split = split;
        session.channel().closeFuture().addListener(f -> {
            dropWaiting(); // on the session's loop
            permits.giveBackAll();
        });
    }

    /** The hook of a session entering its command stage. */
    static RuleHook of(FrontendContext context, ClientSession session, CommandRelayHandler relay,
            ClientReading reading, DigestHook digests) {
        return new RuleHook(context, context.queryRules().forSession(session.eventLoop(), session.clientAddress()),
                session, relay, reading, digests, context.readWriteGroup(session.requestedSchema()) != null);
    }

    /**
     * A client command arrived (frame taken, {@code captured} the traffic capture's record of it or {@code null}).
     *
     * @return whether it goes on to the policy now ({@link CommandRelayHandler#afterRules}); {@code false}: a rule
     *     refused it (answered here) or it waits for its turn (then it goes on from here, in order)
     */
    boolean onArrival(int command, ByteBuf frame, ResponseKind kind, ResponseObserver captured) {
        if (digests != null) {
            digests.onArrival(command, frame); // before the policy, which may answer a COM_STMT_CLOSE itself
        }
        if (!waiting.isEmpty()) {
            waiting.add(new Waiting(frame, command, kind, captured, null, 0, session.user())); // behind the waiting one
            return false;
        }
        if (behindVisit()) {
            // pipelined behind a statement a rule sent to another group: it must not run on that group's connection;
            // or behind Sluice's own command after the previous statement, which would keep it at home
            waiting.add(new Waiting(frame, command, kind, captured, null, 0, session.user()));
            reading.suspend(ClientReading.WAITING_FOR_TURN);
            retry = session.eventLoop().schedule(this::visitOver, VISIT_POLL_NANOS, TimeUnit.NANOSECONDS);
            return false;
        }
        if (permits.any() && relay.isQuiet() && relay.isBetweenResponses()) {
            permits.idle(); // nothing held or running: a permit whose statement the policy answered is free again
        }
        if (relay.lease().visiting()) {
            relay.lease().endVisit(); // a rule's route to another group whose statement Sluice answered itself
        }
        int decided = decide(command, frame, kind, captured);
        if (decided == PERMITTED) {
            proceed(frame, kind, command, captured);
            return false;
        }
        return decided == GO_ON;
    }

    /**
     * A statement holding a {@code maxConcurrency} permit goes on to the policy; the permit rides with it to its
     * send ({@link #beforeSend}), or, when the policy answers it itself, is given back at once.
     */
    private void proceed(ByteBuf frame, ResponseKind kind, int command, ResponseObserver captured) {
        ConcurrencyLimit.Permit permit = permitted;
        permitted = null;
        permits.sending(permit);
        relay.afterRules(frame, kind, command, captured);
        permits.afterPolicy(frame.refCnt() == 0); // released and not sent: answered by the policy
    }

    private int decide(int command, ByteBuf frame, ResponseKind kind, ResponseObserver captured) {
        if (command != Command.COM_QUERY && command != Command.COM_STMT_EXECUTE
                && command != Command.COM_STMT_PREPARE || !rules.active()) {
            return GO_ON;
        }
        rules.arriving();
        QueryRule rule = ruleOf(command, frame);
        rules.arrived(); // a DRY_RUN allow-list counts a statement outside it once, here
        if (rule == null) {
            return GO_ON;
        }
        QueryRule.Counters counters = rule.counters();
        counters.matched();
        QueryRuleConfig.Action action = rule.config().action();
        if (action == QueryRuleConfig.Action.BLOCK) {
            QueryRuleConfig.Block block = rule.config().block();
            counters.acted();
            refuse(frame, captured, block.code(), block.sqlState(), block.message());
            return TAKEN;
        }
        boolean waits = action == QueryRuleConfig.Action.MAX_PER_SECOND
                || action == QueryRuleConfig.Action.MAX_CONCURRENCY;
        if (waits && command != Command.COM_STMT_PREPARE) {
            long now = System.nanoTime();
            long wait = take(rule, now);
            if (wait == 0) {
                return rule.concurrency() != null ? PERMITTED : GO_ON;
            }
            counters.acted(); // held back
            long deadline = now + rule.config().maxWait() * 1_000_000L;
            if (Packets.payloadLength(frame, frame.readerIndex()) == Packets.MAX_PAYLOAD || wait > deadline - now) {
                tooFast(frame, captured, rule); // no turn within the wait (or 16 MiB+, whose rest is on its way)
                return TAKEN;
            }
            waiting.addFirst(new Waiting(frame, command, kind, captured, rule, deadline, session.user()));
            reading.suspend(ClientReading.WAITING_FOR_TURN);
            retry = session.eventLoop().schedule(this::turn, wait, TimeUnit.NANOSECONDS);
            return WAITS;
        }
        if (action == QueryRuleConfig.Action.MIRROR) {
            mirror(command, frame, rule);
        } else if (action == QueryRuleConfig.Action.ROUTE && rule.config().routeGroup() != null) {
            if (command != Command.COM_STMT_PREPARE) { // a prepare runs anywhere: its executions are routed
                GroupRoute.route(context, relay, session, rule, statementSql(command, frame));
            }
        } else if (action == QueryRuleConfig.Action.ROUTE && !split) {
            counters.failed(); // no replicas to choose from: the session runs on its data source
        }
        return GO_ON;
    }

    /** On the session's loop: the first waiting command's turn may have come; it and those behind it go on. */
    private void turn() {
        retry = null;
        Waiting first = waiting.peekFirst();
        if (first == null || relay.isClosed()) {
            dropWaiting();
            return;
        }
        if (!relay.isCommandPhase()) {
            // a COM_CHANGE_USER the client pipelined behind them is being answered: they wait for its end
            retry = session.eventLoop().schedule(this::turn, 10, TimeUnit.MILLISECONDS);
            return;
        }
        long now = System.nanoTime();
        long wait = take(first.rule(), now);
        if (wait != 0 && now + wait <= first.deadline()) {
            retry = session.eventLoop().schedule(this::turn, wait, TimeUnit.NANOSECONDS);
            return;
        }
        waiting.pollFirst();
        if (!java.util.Objects.equals(first.user(), session.user())) {
            if (permitted != null) {
                permitted.giveBack(); // taken for a statement that does not run
                permitted = null;
            }
            userChanged(first); // never run as another user than the one who sent it
        } else if (wait != 0) {
            tooFast(first.frame(), first.captured(), first.rule());
        } else if (first.rule().concurrency() != null) {
            proceed(first.frame(), first.kind(), first.command(), first.captured());
        } else {
            relay.afterRules(first.frame(), first.kind(), first.command(), first.captured());
        }
        goOn();
    }

    /**
     * Whether a command arriving now waits for the statement a query rule sent to another group (decision 194): that
     * statement is taking its connection, or runs on it, or its connection is about to go back to its pool. Not once
     * it went back, nor when it stays because the statement left the session there (a transaction it began): then
     * what follows runs there, as in any transaction. Also behind Sluice's own command after a statement at home.
     */
    private boolean behindVisit() {
        BackendLease lease = relay.lease();
        BackendConnection held = lease.connection();
        if (!lease.visiting()) {
            // A read-back after the previous statement (a SET NAMES' collation, user variables) holds the connection
            // a little longer: a statement that arrives meanwhile would run on it. With rules that route to other
            // groups it waits for the read-back, as it would have waited to be sent, and is then decided; so it does
            // when the policy must know what the read finds before it looks at the statement (a last-insert id).
            return held != null && held.runsOwnCommand() && relay.isQuiet()
                    && (rules.routesToGroups() || relay.policy().readsBackForNext());
        }
        return held == null ? lease.isAcquiring() : held.runsOwnCommand() || !held.isBetweenCommands()
                || relay.policy().mayGiveBack(held);
    }

    /** On the session's loop: the commands behind a statement sent to another group go on once it is over. */
    private void visitOver() {
        retry = null;
        if (relay.isClosed()) {
            dropWaiting();
        } else if (behindVisit() || !relay.isCommandPhase()) {
            retry = session.eventLoop().schedule(this::visitOver, VISIT_POLL_NANOS, TimeUnit.NANOSECONDS);
        } else {
            goOn();
        }
    }

    /** The waiting commands go on in order, until one waits for its turn or behind a statement sent elsewhere. */
    private void goOn() {
        while (!waiting.isEmpty()) {
            if (behindVisit()) {
                relay.sendHeld();
                retry = session.eventLoop().schedule(this::visitOver, VISIT_POLL_NANOS, TimeUnit.NANOSECONDS);
                return;
            }
            Waiting next = waiting.pollFirst();
            if (!java.util.Objects.equals(next.user(), session.user())) {
                userChanged(next);
                continue;
            }
            int decided = decide(next.command(), next.frame(), next.kind(), next.captured());
            if (decided == GO_ON) {
                relay.afterRules(next.frame(), next.kind(), next.command(), next.captured());
            } else if (decided == PERMITTED) {
                proceed(next.frame(), next.kind(), next.command(), next.captured());
            } else if (decided == WAITS) {
                relay.sendHeld(); // what went on so far is flushed; the rest waits for this one's turn
                return;
            }
        }
        reading.resume(ClientReading.WAITING_FOR_TURN);
        relay.sendHeld(); // flushes what went on
    }

    /**
     * Takes what {@code rule} asks of a statement at {@code nowNanos}: a token of its rate, or a permit of its
     * concurrency (then kept in {@link #permitted}).
     *
     * @return 0 when taken; else in how many nanoseconds to look again
     */
    private long take(QueryRule rule, long nowNanos) {
        if (rule.rate() != null) {
            return rule.rate().take(session.user(), nowNanos);
        }
        permitted = rule.concurrency().tryTake();
        return permitted != null ? 0 : PERMIT_POLL_NANOS;
    }

    /** The session closed: what waits is dropped. */
    private void dropWaiting() {
        if (retry != null) {
            retry.cancel(false);
            retry = null;
        }
        for (Waiting each; (each = waiting.poll()) != null; ) {
            each.frame().release();
        }
    }

    private void userChanged(Waiting waited) {
        refuse(waited.frame(), waited.captured(), ER_UNKNOWN_ERROR, "HY000", "Statement refused: it waited for a"
                + " query rule's turn while a COM_CHANGE_USER sent after it changed the session's user");
    }

    private void tooFast(ByteBuf frame, ResponseObserver captured, QueryRule rule) {
        rule.counters().failed();
        if (rule.concurrency() != null) {
            refuse(frame, captured, ER_USER_LIMIT_REACHED, "42000", "Statement refused by query rule " + rule.name()
                    + ": more than " + rule.config().limit() + " statements of the rule at once (waited "
                    + rule.config().maxWait() + " ms at most)");
            return;
        }
        refuse(frame, captured, ER_USER_LIMIT_REACHED, "42000", "Statement refused by query rule " + rule.name()
                + ": more than " + rule.config().limit() + " a second for user " + session.user() + " (waited "
                + rule.config().maxWait() + " ms at most)");
    }

    /** Answers a command (taken) with an ERR of Sluice's own, in its turn among the session's responses. */
    private void refuse(ByteBuf frame, ResponseObserver captured, int code, String sqlState, String message) {
        int at = frame.readerIndex();
        int sequenceId = Packets.sequenceId(frame, at) + 1;
        boolean continued = Packets.payloadLength(frame, at) == Packets.MAX_PAYLOAD;
        frame.release();
        if (captured != null) {
            captured.onNoResponse();
        }
        ByteBuf err = Packets.err(session.channel().alloc(), sequenceId, code, sqlState, message);
        if (continued) {
            // a statement of 16 MiB or more: its next packets are on their way and cannot be answered in step
            relay.failAndClose(err);
        } else {
            relay.answer(err);
        }
    }

    /**
     * A client command (borrowed frame) is about to be forwarded on {@code connection}: tells the connection the
     * record its outcome goes to, the statistics' and, for a statement a {@code timeoutMilliseconds} rule matches,
     * its timer's ({@link TimedStatement}).
     */
    void beforeSend(BackendConnection connection, ByteBuf frame, int command) {
        StatementRecord record = digests == null ? null : digests.beforeSend(frame, command);
        if ((command == Command.COM_QUERY || command == Command.COM_STMT_EXECUTE) && rules.timesOut()) {
            QueryRule rule = ruleOf(command, frame);
            if (rule != null && rule.config().action() == QueryRuleConfig.Action.TIMEOUT) {
                record = TimedStatement.start(record, rule, connection, session,
                        context.pool(connection.dataSourceName()), context.serverInfo().hasMariaDbCapabilities());
            } else if (rule != null && rule.config().action() == QueryRuleConfig.Action.MAX_ROWS) {
                connection.limitRowsNext(rule.config().limit(), rule.name(), rule.counters()::acted); // decision 191
            }
        }
        if (permits.any() && (command == Command.COM_QUERY || command == Command.COM_STMT_EXECUTE)
                && (permits.isSending() || limited(command, frame))) {
            record = permits.onSend(record); // a maxConcurrency statement: its permit comes back at its end
        }
        if (record != null) {
            connection.recordNext(record);
        }
        unsent = record;
    }

    /**
     * The command {@link #beforeSend} was just told of is not sent after all: it waits for its statement to be
     * prepared on the connection first (a split session's execution on a replica, a pooled connection), and goes
     * through {@link #beforeSend} again when it is sent. Its record is dropped, so that its timer is not armed twice
     * (two KILLs) and its {@code maxConcurrency} permit rides with the statement when it is sent.
     */
    void notSent(BackendConnection connection) {
        if (unsent != null) {
            connection.recordNext(null);
            unsent.unsent();
            unsent = null;
        }
    }

    /**
     * The route a {@code route} rule gives a statement of a read/write split session (frame borrowed), or
     * {@code null}: none. Asked by the policy when it routes, which may be after the statement waited behind others,
     * so it is looked up again (cached) rather than remembered from arrival.
     */
    Route routeOf(int command, ByteBuf frame) {
        if (!rules.routes()) {
            return null;
        }
        QueryRule rule = ruleOf(command, frame);
        if (rule == null || rule.config().action() != QueryRuleConfig.Action.ROUTE
                || rule.config().routeGroup() != null) {
            return null; // another group's route was taken at arrival (decision 194)
        }
        routing = rule;
        return rule.config().route() == QueryRuleConfig.Target.PRIMARY ? Route.PRIMARY : Route.REPLICA;
    }

    /**
     * Counts what became of the statement {@link #routeOf} gave a route last: routed as the rule says, or not (a write
     * or a transaction's statement, which runs where it must).
     */
    void routed(boolean applied) {
        QueryRule rule = routing;
        routing = null;
        if (rule != null) {
            if (applied) {
                rule.counters().acted();
            } else {
                rule.counters().failed();
            }
        }
    }

    /** A text statement a {@code mirror} rule matched goes, as a copy, to the rule's target too. */
    private void mirror(int command, ByteBuf frame, QueryRule rule) {
        int at = frame.readerIndex();
        int length = Packets.payloadLength(frame, at);
        if (command != Command.COM_QUERY || length >= Packets.MAX_PAYLOAD) {
            rule.counters().failed(); // a prepared statement's execution or a statement of 16 MiB+: not copied
            return;
        }
        String sql = frame.toString(at + Packets.HEADER_SIZE + 1, length - 1, java.nio.charset.StandardCharsets.UTF_8);
        context.mirror(session.eventLoop()).copy(rule, session.key(), sql);
    }

    /** Whether a statement sent after it was held back is one a {@code maxConcurrency} rule let go on. */
    private boolean limited(int command, ByteBuf frame) {
        QueryRule rule = ruleOf(command, frame);
        return rule != null && rule.concurrency() != null;
    }

    /** The text of a query, or the digest text of the SQL an execute runs; {@code null}: unknown. */
    private String statementSql(int command, ByteBuf frame) {
        int at = frame.readerIndex() + Packets.HEADER_SIZE;
        int end = Math.min(frame.writerIndex(), at + Packets.payloadLength(frame, frame.readerIndex()));
        if (command == Command.COM_QUERY) {
            return frame.toString(at + 1, end - at - 1, java.nio.charset.StandardCharsets.UTF_8);
        }
        if (digests == null || end - at < 6 || frame.getByte(at + 5) != 0) {
            return null; // statistics off, or a cursor: its rows come by COM_STMT_FETCH on the connection it opened on
        }
        SqlDigest digest = digests.statements().preparedDigest(frame.getIntLE(at + 1));
        return digest == null ? null : digest.text();
    }

    private QueryRule ruleOf(int command, ByteBuf frame) {
        int at = frame.readerIndex() + Packets.HEADER_SIZE;
        int end = Math.min(frame.writerIndex(), at + Packets.payloadLength(frame, frame.readerIndex()));
        if (command != Command.COM_STMT_EXECUTE) {
            return command == Command.COM_QUERY || command == Command.COM_STMT_PREPARE
                    ? rules.ruleFor(frame, at + 1, end, session.user(), session.schema()) : null;
        }
        if (digests == null || end - at < 5) {
            return null; // statistics off: the statement's SQL is not known here, only its prepare was checked
        }
        SessionDigests statements = digests.statements();
        int id = frame.getIntLE(at + 1);
        SqlDigest digest = statements.preparedDigest(id);
        return digest == null ? null : rules.ruleFor(statements.preparedShape(id), digest, session.user(),
                session.schema());
    }
}
