package io.sluice.backend.pool;

import io.sluice.backend.BackendConnection;
import io.sluice.backend.SessionKey;
import io.sluice.state.SessionVariables;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.Objects;

/**
 * The idle connections of one loop, most recently used first, so that a quiet period lets the oldest ones time out.
 * On the loop only, except {@link #size()}.
 */
final class IdleConnections implements Iterable<BackendConnection> {
    private final ArrayDeque<BackendConnection> idle = new ArrayDeque<>();
    /** {@code idle.size()}, published for readers on other threads (metrics, the admin API). */
    private volatile int size;

    /** Puts a connection back as the most recently used. */
    void addFirst(BackendConnection connection) {
        idle.addFirst(connection);
        size = idle.size();
    }

    /**
     * The most recently used connection if it has this key, schema and session variables, taken out; else
     * {@code null}. Transaction pooling's fast path, once per transaction.
     */
    BackendConnection takeFirstIfSame(SessionKey key, String schema, SessionVariables variables) {
        BackendConnection first = idle.peekFirst();
        if (first == null || !first.key().equals(key) || !Objects.equals(first.state().schema(), schema)
                || !first.state().variables().matches(variables)) {
            return null;
        }
        return pollFirst();
    }

    /**
     * Takes out a connection of {@code key}: one with {@code schema} selected if there is one, else (when a schema is
     * wanted) one of another schema, for the caller to select it; {@code null} when none has the key.
     */
    BackendConnection take(SessionKey key, String schema) {
        BackendConnection sameKey = null;
        for (BackendConnection candidate : idle) {
            if (!candidate.key().equals(key)) {
                continue;
            }
            if (Objects.equals(candidate.state().schema(), schema)) {
                remove(candidate);
                return candidate;
            }
            if (sameKey == null && schema != null) {
                sameKey = candidate;
            }
        }
        if (sameKey != null) {
            remove(sameKey);
        }
        return sameKey;
    }

    private BackendConnection pollFirst() {
        BackendConnection first = idle.pollFirst();
        size = idle.size();
        return first;
    }

    /** The least recently used connection, taken out, or {@code null}. */
    BackendConnection pollLast() {
        BackendConnection last = idle.pollLast();
        size = idle.size();
        return last;
    }

    /** The least recently used connection, left in, or {@code null}. */
    BackendConnection peekLast() {
        return idle.peekLast();
    }

    boolean remove(BackendConnection connection) {
        boolean removed = idle.remove(connection);
        size = idle.size();
        return removed;
    }

    boolean isEmpty() {
        return idle.isEmpty();
    }

    /** How many are idle; may be read from any thread. */
    int size() {
        return size;
    }

    /** Least recently used first; {@link Iterator#remove()} is supported. */
    Iterator<BackendConnection> oldestFirst() {
        Iterator<BackendConnection> it = idle.descendingIterator();
        return new Iterator<>() {
            @Override
            public boolean hasNext() {
                return it.hasNext();
            }

            @Override
            public BackendConnection next() {
                return it.next();
            }

            @Override
            public void remove() {
                it.remove();
                size = idle.size();
            }
        };
    }

    @Override
    public Iterator<BackendConnection> iterator() {
        return idle.iterator();
    }
}
