package io.sluice.frontend;

import io.netty.buffer.ByteBuf;
import io.sluice.backend.BackendConnection;
import io.sluice.config.QueryRuleConfig;
import io.sluice.protocol.Command;
import io.sluice.protocol.Packets;
import io.sluice.readwrite.Route;
import io.sluice.rules.QueryRule;
import io.sluice.rules.SessionRules;
import io.sluice.sql.SqlDigest;
import io.sluice.statistics.SessionDigests;
import io.sluice.statistics.StatementRecord;

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

    private RuleHook(FrontendContext context, SessionRules rules, ClientSession session, CommandRelayHandler relay,
            DigestHook digests, boolean split) {
        this.context = context;
        this.rules = rules;
        this.session = session;
        this.relay = relay;
        this.digests = digests;
        this.split = split;
    }

    /** The hook of a session entering its command stage. */
    static RuleHook of(FrontendContext context, ClientSession session, CommandRelayHandler relay, DigestHook digests) {
        return new RuleHook(context, context.queryRules().forSession(session.eventLoop(), session.clientAddress()),
                session, relay, digests, context.readWriteGroup(session.requestedSchema()) != null);
    }

    /**
     * A client command arrived (frame taken). Returns it to go on to the policy, or {@code null}: a rule refused it,
     * it was answered here and released.
     */
    ByteBuf onArrival(int command, ByteBuf frame) {
        if (digests != null) {
            digests.onArrival(command, frame); // before the policy, which may answer a COM_STMT_CLOSE itself
        }
        if (command != Command.COM_QUERY && command != Command.COM_STMT_EXECUTE
                && command != Command.COM_STMT_PREPARE || !rules.active()) {
            return frame;
        }
        rules.arriving();
        QueryRule rule = ruleOf(command, frame);
        rules.arrived(); // a DRY_RUN allow-list counts a statement outside it once, here
        if (rule == null) {
            return frame;
        }
        QueryRule.Counters counters = rule.counters();
        counters.matched();
        if (rule.config().action() == QueryRuleConfig.Action.BLOCK) {
            QueryRuleConfig.Block block = rule.config().block();
            int at = frame.readerIndex();
            int sequenceId = Packets.sequenceId(frame, at) + 1;
            boolean continued = Packets.payloadLength(frame, at) == Packets.MAX_PAYLOAD;
            frame.release();
            counters.acted();
            ByteBuf err = Packets.err(session.channel().alloc(), sequenceId, block.code(), block.sqlState(),
                    block.message());
            if (continued) {
                // a statement of 16 MiB or more: its next packets are on their way and cannot be answered in step
                relay.failAndClose(err);
            } else {
                relay.answer(err);
            }
            return null;
        }
        if (rule.config().action() == QueryRuleConfig.Action.MIRROR) {
            mirror(command, frame, rule);
        } else if (rule.config().action() == QueryRuleConfig.Action.ROUTE && !split) {
            counters.failed(); // no replicas to choose from: the session runs on its data source
        }
        return frame;
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
            }
        }
        if (record != null) {
            connection.recordNext(record);
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
        if (rule == null || rule.config().action() != QueryRuleConfig.Action.ROUTE) {
            return null;
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
