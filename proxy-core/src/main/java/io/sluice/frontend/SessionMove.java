package io.sluice.frontend;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Why Sluice moves a live session to another backend of its group, and why a session refuses to move. A session
 * moves only in transaction pooling and only between transactions: its state (schema, variables, user variables,
 * prepared statements) already follows it from one server connection to the next, so a connection of another
 * server is made to match it as any connection is (see docs/design/2026-11-27-moving-live-sessions.md).
 */
final class SessionMove {

    private SessionMove() {
    }

    /** What asked for the move; a metrics label each. */
    enum Reason {
        /** An operator drained the session's backend. */
        DRAIN,
        /** The session's backend failed its health checks. */
        DOWN,
        /** A backend came (back) into rotation: sessions spread towards the balancer's target. */
        REBALANCE;

        String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Why a session stays where it is; a metrics label each. */
    enum Refusal {
        /** Session pooling: the session's state lives only on its own server connection. */
        SESSION_POOLING,
        /** Something only its server connection holds (temporary table, lock, cursor...): it moves once that ends. */
        PINNED,
        /** No other backend takes sessions, or none gave a connection. */
        NO_BACKEND,
        /** Session pooling: the new connection could not be made to match the session; it stayed where it was. */
        FAILED,
        /** The new server had not applied the session's last write (GTID) in time: the session stayed. */
        GTID_WAIT_TIMEOUT,
        /**
         * Session pooling with MariaDB's metadata caching: a prepared statement's result columns differ on the new
         * server from those the client last received (or it does not prepare there): the session stayed.
         */
        METADATA_DIFFERS;

        String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** The labels of {@link Reason}, in ordinal order. */
    static List<String> reasonLabels() {
        return Arrays.stream(Reason.values()).map(Reason::label).toList();
    }

    /** The labels of {@link Refusal}, in ordinal order. */
    static List<String> refusalLabels() {
        return Arrays.stream(Refusal.values()).map(Refusal::label).toList();
    }
}
