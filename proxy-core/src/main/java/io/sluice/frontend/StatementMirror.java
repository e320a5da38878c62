package io.sluice.frontend;

import io.netty.channel.EventLoop;
import io.sluice.backend.BackendConnection;
import io.sluice.backend.MirroredQuery;
import io.sluice.backend.SessionKey;
import io.sluice.backend.pool.BackendPool;
import io.sluice.backend.pool.EventLoopPool;
import io.sluice.rules.QueryRule;
import io.sluice.routing.ReadWriteGroup;
import java.util.ArrayDeque;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One event loop's copies of statements for {@code mirror} query rules (issue #41 item 2): each runs on a pooled
 * connection of the rule's data source (a split group's primary), logged in as that data source's own account, in
 * its URL's database, off the client's path; its result is discarded as it arrives and the connection is reset
 * before it goes back to the pool, since a copied statement may leave any state behind. At most
 * {@value #RUNNING} run at once and {@value #QUEUED} wait; a copy that finds the queue full is dropped and counted
 * as the rule's error, so a slow mirror never slows the clients down nor holds memory without bound.
 */
final class StatementMirror {
    private static final Logger log = LoggerFactory.getLogger(StatementMirror.class);
    static final int RUNNING = 4;
    static final int QUEUED = 256;

    private final FrontendContext context;
    private final EventLoop loop;
    private final ArrayDeque<Copy> queue = new ArrayDeque<>();
    private int running;

    private record Copy(QueryRule rule, SessionKey key, String sql) {
    }

    StatementMirror(FrontendContext context, EventLoop loop) {
        this.context = context;
        this.loop = loop;
    }

    /** Copies {@code sql}, a statement {@code rule} matched, to the rule's target. On the loop. */
    void copy(QueryRule rule, SessionKey key, String sql) {
        if (queue.size() >= QUEUED) {
            rule.counters().failed(); // dropped: the mirror falls behind
            return;
        }
        queue.add(new Copy(rule, key.withAccount(null), sql));
        next();
    }

    private void next() {
        while (running < RUNNING && !queue.isEmpty()) {
            Copy copy = queue.poll();
            BackendPool pool = target(copy.rule().config().mirror());
            if (pool == null) {
                copy.rule().counters().failed();
                continue;
            }
            running++;
            run(pool.forLoop(loop), copy);
        }
    }

    private BackendPool target(String name) {
        ReadWriteGroup group = context.readWriteGroup(name);
        return context.pool(group != null && group.name().equals(name) ? group.primary() : name);
    }

    private void run(EventLoopPool pool, Copy copy) {
        pool.acquire(copy.key(), pool.parent().urlDatabase()).addListener(f -> {
            if (!f.isSuccess()) {
                ended(copy, "no connection: " + f.cause().getMessage());
                return;
            }
            BackendConnection connection = (BackendConnection) f.getNow();
            connection.run(new MirroredQuery(copy.sql(), failure -> {
                pool.resetAndReturn(connection); // whatever the copy left on it goes before anyone else uses it
                ended(copy, failure == null ? null : failure.getMessage());
            }));
        });
    }

    private void ended(Copy copy, String failure) {
        running--;
        if (failure == null) {
            copy.rule().counters().acted();
        } else {
            copy.rule().counters().failed();
            log.debug("query rule {}: the copy to {} failed: {}", copy.rule().name(), copy.rule().config().mirror(),
                    failure);
        }
        next();
    }
}
