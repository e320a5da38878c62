package io.sluice.frontend;

import io.sluice.backend.pool.PoolExhaustedException;
import io.sluice.pooling.PinReason;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Says why a data source's pool ran out, to the client whose statement waited in vain and to the operator: what holds
 * the connections (in transaction pooling, how many sessions are pinned to theirs, and by what) and which setting to
 * change. The operator hears it as a WARN at most once per {@link #WARN_INTERVAL_NANOS} per Sluice, however many
 * clients time out together.
 */
final class PoolExhaustion {
    private static final Logger log = LoggerFactory.getLogger(PoolExhaustion.class);
    static final long WARN_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final SessionRegistry registry;
    private final boolean transactionPooling;
    private final AtomicLong lastWarnNanos = new AtomicLong(System.nanoTime() - WARN_INTERVAL_NANOS);

    PoolExhaustion(SessionRegistry registry, boolean transactionPooling) {
        this.registry = registry;
        this.transactionPooling = transactionPooling;
    }

    /** The explanation following "Too many connections: " in the client's ERR 1040; WARNs when it is time to. */
    String explain(PoolExhaustedException cause) {
        String setting = "dataSources." + cause.dataSource()
                + (cause.account() != null ? ".maxPoolSizePerAccount" : ".maxPoolSize");
        String why;
        if (!transactionPooling) {
            why = "in pooling mode SESSION each client session holds one server connection for its whole life: raise "
                    + setting + ", or set pooling.mode TRANSACTION to share connections between transactions";
        } else {
            Map<PinReason, Integer> pinned = registry.pinnedNow();
            int total = pinned.values().stream().mapToInt(Integer::intValue).sum();
            if (total == 0) {
                why = "no session is pinned: every connection is in a transaction or statement; raise " + setting
                        + ", or shorten transactions";
            } else {
                StringJoiner reasons = new StringJoiner(", ", " (", ")");
                pinned.forEach((reason, n) -> reasons.add(n + " " + reason.label()));
                why = total + (total == 1 ? " session is" : " sessions are") + " pinned to their connection" + reasons
                        + ": raise " + setting + ", or avoid what pins sessions (pinnedBy in GET /api/sessions?verbose)";
            }
        }
        String message = cause.getMessage() + "; " + why;
        long now = System.nanoTime();
        long last = lastWarnNanos.get();
        if (now - last >= WARN_INTERVAL_NANOS && lastWarnNanos.compareAndSet(last, now)) {
            log.warn("data source '{}' ran out of connections: {}", cause.dataSource(), message);
        }
        return message;
    }
}
