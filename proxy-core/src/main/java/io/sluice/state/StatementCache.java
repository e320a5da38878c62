package io.sluice.state;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.IntConsumer;

/**
 * The statements prepared on one backend connection, by SQL text, so that every session that prepared the same text
 * shares one server statement. Bounded: beyond {@code capacity} the least recently used is evicted, and its server id
 * handed to a closer that sends COM_STMT_CLOSE. Lives on the connection's event loop.
 */
public final class StatementCache {

    /** A statement prepared on the connection. */
    public static final class Entry {
        private final int serverId;
        private final int parameters;
        /** The parameter types the server last received for it; an execute without types reuses them. */
        private byte[] boundTypes;

        Entry(int serverId, int parameters) {
            this.serverId = serverId;
            this.parameters = parameters;
        }

        public int serverId() {
            return serverId;
        }

        public int parameters() {
            return parameters;
        }

        public byte[] boundTypes() {
            return boundTypes;
        }

        public void boundTypes(byte[] types) {
            this.boundTypes = types;
        }
    }

    private final int capacity;
    private final LinkedHashMap<String, Entry> entries;

    public StatementCache(int capacity) {
        this.capacity = capacity;
        this.entries = new LinkedHashMap<>(16, 0.75f, true);
    }

    /** The statement prepared for {@code sql}, marked as just used; {@code null} if this connection has none. */
    public Entry get(String sql) {
        return entries.get(sql);
    }

    /**
     * Records a statement the server prepared. A statement already cached for the same text is replaced and closed,
     * as is the least recently used one when the cache is full.
     */
    public Entry put(String sql, int serverId, int parameters, IntConsumer close) {
        Entry entry = new Entry(serverId, parameters);
        Entry replaced = entries.put(sql, entry);
        if (replaced != null && replaced.serverId != serverId) {
            close.accept(replaced.serverId);
        }
        if (entries.size() > capacity) {
            var eldest = entries.entrySet().iterator();
            Map.Entry<String, Entry> evicted = eldest.next();
            eldest.remove();
            close.accept(evicted.getValue().serverId);
        }
        return entry;
    }

    /** The server forgot every statement (COM_RESET_CONNECTION, COM_CHANGE_USER). */
    public void clear() {
        entries.clear();
    }

    public int size() {
        return entries.size();
    }
}
