package io.sluice.frontend;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.balancer.Backend;
import io.sluice.balancer.BackendGroup;
import io.sluice.balancer.BackendState;
import io.sluice.balancer.BackendStatus;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves live sessions between the backends of the group, in both pooling modes, when the group changes: the
 * sessions of a backend that is drained or goes down leave it at once when they hold no connection, else when their
 * transaction ends; when a backend comes (back) into rotation, sessions move to it at up to
 * {@code pooling.sessionMovesPerSecond}, from the backends with the most sessions per weight, until the group is as
 * even as moving one more session could make it. A session that cannot move (pinned; session pooling on a server
 * other than MariaDB) stays and is counted. Session pooling moves through {@link SessionHandover} (decision 104). Told of status changes by the {@link BackendGroup}; ticks on its own executor.
 */
public final class SessionMoves implements BackendGroup.Listener {
    private static final Logger log = LoggerFactory.getLogger(SessionMoves.class);
    static final long TICK_MILLIS = 100;

    private final FrontendContext context;
    private final EventExecutor ticks;
    private ScheduledFuture<?> rebalancing;

    /**
     * @param ticks where rebalancing runs, one step every {@value #TICK_MILLIS} ms while there is something to move
     */
    public SessionMoves(FrontendContext context, EventExecutor ticks) {
        this.context = context;
        this.ticks = ticks;
    }

    /** Follows the group's status changes from now on. */
    public void start() {
        context.group().addListener(this);
    }

    @Override
    public void statusChanged(BackendState now, BackendStatus before) {
        if (now.status() != BackendStatus.UP) {
            moveAllOff(now.name(), now.status() == BackendStatus.DRAINING ? SessionMove.Reason.DRAIN
                    : SessionMove.Reason.DOWN);
        } else if (before != BackendStatus.UP && context.pooling().sessionMovesPerSecond() > 0) {
            startRebalancing();
        }
    }

    /** Every session on {@code backend} moves to the balancer's choice among the others. */
    void moveAllOff(String backend, SessionMove.Reason reason) {
        int asked = 0;
        for (ClientSession session : context.registry().sessions()) {
            if (backend.equals(session.backendName())) {
                session.move(reason, null);
                asked++;
            }
        }
        if (asked > 0) {
            log.info("backend {} is {}: {} session(s) move to other backends at their next idle moment outside a "
                    + "transaction", backend, reason.label(), asked);
        }
    }

    private synchronized void startRebalancing() {
        if (rebalancing == null || rebalancing.isDone()) {
            rebalancing = ticks.scheduleAtFixedRate(this::rebalanceStep, TICK_MILLIS, TICK_MILLIS,
                    TimeUnit.MILLISECONDS);
        }
    }

    private synchronized void stopRebalancing() {
        if (rebalancing != null) {
            rebalancing.cancel(false);
            rebalancing = null;
        }
    }

    /**
     * One step: plans up to a tick's share of moves on a copy of the counts, each from the backend with the most
     * sessions per weight to the one with the fewest, while that narrows the spread; then asks those sessions to move.
     */
    void rebalanceStep() {
        try {
            List<Backend> accepting = new ArrayList<>();
            for (Backend backend : context.group().backends()) {
                if (backend.acceptsSessions()) {
                    accepting.add(backend);
                }
            }
            Map<String, Integer> counts = new HashMap<>();
            for (Backend backend : accepting) {
                counts.put(backend.name(), backend.activeSessions());
            }
            List<ClientSession> candidates = new ArrayList<>();
            for (ClientSession session : context.registry().sessions()) {
                String on = session.backendName();
                if (on == null || !counts.containsKey(on) || !session.movable()) {
                    continue;
                }
                if (session.movePending()) {
                    counts.merge(on, -1, Integer::sum); // already leaving: counted where it goes, roughly
                } else {
                    candidates.add(session);
                }
            }
            int budget = Math.max(1, (int) (context.pooling().sessionMovesPerSecond() * TICK_MILLIS / 1000));
            int planned = 0;
            while (planned < budget) {
                Backend from = extreme(accepting, counts, true);
                Backend to = extreme(accepting, counts, false);
                if (from == null || to == null || from == to
                        || (counts.get(from.name()) - 1) * (long) to.weight()
                        < (counts.get(to.name()) + 1) * (long) from.weight()) {
                    break; // one more move would not make the group more even
                }
                ClientSession moving = take(candidates, from.name());
                if (moving == null) {
                    break; // the rest are leaving already
                }
                moving.move(SessionMove.Reason.REBALANCE, to.name());
                counts.merge(from.name(), -1, Integer::sum);
                counts.merge(to.name(), 1, Integer::sum);
                planned++;
            }
            if (planned == 0) {
                stopRebalancing();
            }
        } catch (RuntimeException e) {
            log.warn("rebalancing sessions failed: {}", e.toString());
            stopRebalancing();
        }
    }

    /** The backend with the most (or fewest) sessions per weight; weight 0 never takes sessions. */
    private static Backend extreme(List<Backend> backends, Map<String, Integer> counts, boolean most) {
        Backend best = null;
        double bestLoad = 0;
        for (Backend backend : backends) {
            if (backend.weight() <= 0) {
                continue;
            }
            double load = counts.get(backend.name()) / (double) backend.weight();
            if (best == null || (most ? load > bestLoad : load < bestLoad)) {
                best = backend;
                bestLoad = load;
            }
        }
        return best;
    }

    private static ClientSession take(List<ClientSession> candidates, String backend) {
        for (int i = candidates.size() - 1; i >= 0; i--) {
            if (backend.equals(candidates.get(i).backendName())) {
                return candidates.remove(i);
            }
        }
        return null;
    }
}
