package io.sluice.routing;

import io.sluice.backend.BackendConnection;
import io.sluice.backend.BackendException;
import io.sluice.backend.TextQuery;
import io.sluice.balancer.replication.CausalWait;
import io.sluice.config.CausalReads;
import io.sluice.pooling.GtidWait;
import io.sluice.readwrite.RouteReason;
import java.util.function.Consumer;

/**
 * The causal wait of a read/write split session's read on a replica (decisions 097, 101, 102): {@code LOCAL} waits
 * for the session's own last GTID; {@code GLOBAL} first reads the primary's position ({@link #PRIMARY_POSITION}, on
 * a connection of the primary's taken for it; {@link #MYSQL_PRIMARY_POSITION} on MySQL) and waits for that. Either
 * wait is {@code MASTER_GTID_WAIT} (MySQL: {@code WAIT_FOR_EXECUTED_GTID_SET}, see {@link GtidWait}) on the
 * replica's connection, as one of Sluice's own commands; a timeout or failure (of the wait, or of reading the
 * primary's position) ends in {@link FallBackToPrimary}: the read runs on the primary. On the session's loop.
 */
final class CausalWaiter {

    /**
     * The primary's position for {@code GLOBAL}: {@code gtid_binlog_pos}, what its binary log holds and so what its
     * replicas receive and, applied, record in the {@code gtid_slave_pos} that {@code MASTER_GTID_WAIT} compares
     * with. Not {@code gtid_current_pos}: on a primary that was once a replica it also holds the GTIDs it applied
     * itself, which its binary log lacks when {@code log_slave_updates} is off; the replicas would never reach them and
     * every read would time out.
     */
    static final String PRIMARY_POSITION = "SELECT @@GLOBAL.gtid_binlog_pos";
    /**
     * MySQL's: {@code gtid_executed}, every transaction the primary committed (and logged: MySQL assigns GTIDs only to
     * what it writes to its binary log), which {@code WAIT_FOR_EXECUTED_GTID_SET} compares with the replica's own.
     */
    static final String MYSQL_PRIMARY_POSITION = "SELECT @@GLOBAL.gtid_executed";

    private final ReadWriteGroup group;
    private final Router router;
    private final boolean deprecateEof;
    /** Told when a read falls back, so that the session's next diagnostics go where the read ran. */
    private final Runnable onFallBack;

    CausalWaiter(ReadWriteGroup group, Router router, boolean deprecateEof, Runnable onFallBack) {
        this.group = group;
        this.router = router;
        this.deprecateEof = deprecateEof;
        this.onFallBack = onFallBack;
    }

    /** Whether a read on a replica waits, for a session whose last GTID is {@code lastGtid} ({@code null}: none). */
    boolean needed(String lastGtid) {
        CausalReads mode = group.config().causalReads();
        return mode == CausalReads.GLOBAL || mode == CausalReads.LOCAL && lastGtid != null && !lastGtid.isEmpty();
    }

    /** Waits on {@code replica}: {@code done} gets {@code null} (read there), a fallback, or the broken connection. */
    void await(BackendConnection replica, String lastGtid, Consumer<BackendException> done) {
        if (group.config().causalReads() != CausalReads.GLOBAL) {
            waitFor(replica, lastGtid, done);
            return;
        }
        // The replica's flavour is the group's: its primary is the same server software.
        router.queryPrimary(primaryPosition(replica.state().isMySql()), rows -> {
            String position = TextQuery.firstValue(rows);
            if (position == null || position.isEmpty()) {
                group.causalWait(ReadWriteGroup.CausalOutcome.REACHED); // nothing written yet: any replica is current
                done.accept(null);
            } else {
                waitFor(replica, position, done);
            }
        }, failure -> fallBack(ReadWriteGroup.CausalOutcome.FAILED, replica, "the primary's position ("
                + failure.getMessage() + ")", done));
    }

    /** The query that reads a primary's position for {@code GLOBAL}, by flavour. */
    static String primaryPosition(boolean mySql) {
        return mySql ? MYSQL_PRIMARY_POSITION : PRIMARY_POSITION;
    }

    private void waitFor(BackendConnection replica, String positionText, Consumer<BackendException> done) {
        GtidWait.run(replica, positionText, group.config().causalReadsTimeout(), deprecateEof, new GtidWait.Outcome() {
            @Override
            public void reached() {
                group.causalWait(ReadWriteGroup.CausalOutcome.REACHED);
                done.accept(null);
            }

            @Override
            public void notReached(CausalWait.Outcome why) {
                fallBack(why == CausalWait.Outcome.TIMED_OUT ? ReadWriteGroup.CausalOutcome.TIMED_OUT
                        : ReadWriteGroup.CausalOutcome.FAILED, replica, positionText, done);
            }

            @Override
            public void lost(BackendException cause) {
                done.accept(cause); // the connection broke
            }
        });
    }

    private void fallBack(ReadWriteGroup.CausalOutcome outcome, BackendConnection replica, String waitedFor,
            Consumer<BackendException> done) {
        group.causalWait(outcome);
        group.routed(RouteReason.CAUSAL_TIMEOUT);
        onFallBack.run();
        router.routeTo(null);
        done.accept(new FallBackToPrimary("causal read: " + replica.dataSourceName() + " had not applied "
                + waitedFor + " (" + outcome.label() + ")"));
    }
}
