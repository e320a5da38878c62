package io.sluice.statistics;

import io.netty.buffer.ByteBuf;
import io.sluice.protocol.Command;
import io.sluice.protocol.Packets;
import io.sluice.sql.SqlDigest;

/**
 * One session's side of the statistics, on its event loop: finds the entry of each statement it sends (a COM_QUERY
 * by the shape of its bytes, a COM_STMT_EXECUTE by the statement id the client knows), keeps the shapes of its
 * prepared statements by that id, and knows its scope (user, schema, group), looked up again only when one of them
 * changes. A prepared statement counts under its SQL's digest, once per execution; the prepare itself is not a
 * statement of its own, as in performance_schema.
 */
public final class SessionDigests {

    private static final int FREE = 0;
    /** The most prepared statements a session's table keeps (MariaDB's max_prepared_stmt_count is 16,382). */
    private static final int MAX_PREPARED = 65_536;
    /** A closed statement's slot; never looked up, since -1 is {@link #LAST_PREPARED}. */
    private static final int GONE = -1;
    /** The id MariaDB clients execute "the statement prepared last" by, in a pipeline after its prepare. */
    private static final int LAST_PREPARED = -1;

    private final LoopDigests table;
    private String user;
    private String schema;
    private String group;
    private DigestScope scope;
    /** The entry found last: a pin the session's response caused is its statement's. */
    private DigestCounters last;
    /** Pins found in a statement before it was sent: its entry gets them. */
    private int pinsAhead;

    // Prepared statements by client id: open addressing, ids never 0 (FREE) nor -1 (GONE) in practice.
    private int[] ids = new int[16];
    private long[] shapes = new long[16];
    private SqlDigest[] digests = new SqlDigest[16];
    private int used;
    /** The last COM_STMT_PREPARE sent. */
    private Prepare lastPrepared;

    SessionDigests(LoopDigests table) {
        this.table = table;
    }

    /**
     * A client command is about to be forwarded (frame borrowed, as the client sent it): the record of its outcome,
     * or {@code null} for a command that is no statement (a ping, a COM_STMT_CLOSE...). On the session's loop.
     *
     * @param group the read/write split group, or else the data source the session is on
     */
    public StatementRecord onCommand(int command, ByteBuf frame, String user, String schema, String group) {
        int at = frame.readerIndex() + Packets.HEADER_SIZE;
        int end = Math.min(frame.writerIndex(), at + Packets.payloadLength(frame, frame.readerIndex()));
        switch (command) {
            case Command.COM_QUERY -> {
                long shape = table.shapeOf(frame, at + 1, end);
                return found(table.entry(shape, scope(user, schema, group), frame, at + 1, end));
            }
            case Command.COM_STMT_EXECUTE -> {
                if (end - at < 5) {
                    return null;
                }
                int id = frame.getIntLE(at + 1);
                if (id == LAST_PREPARED) {
                    // MariaDB's prepare-and-execute: the statement the client prepared just before, whose id it
                    // has not seen yet
                    return lastPrepared == null ? null
                            : found(table.entry(lastPrepared.shape, scope(user, schema, group), lastPrepared.digest));
                }
                int slot = slot(id);
                if (slot < 0) {
                    return null; // prepared before statistics began, or its prepare failed
                }
                return found(table.entry(shapes[slot], scope(user, schema, group), digests[slot]));
            }
            case Command.COM_STMT_PREPARE -> {
                long shape = table.shapeOf(frame, at + 1, end);
                lastPrepared = new Prepare(this, shape, table.owner().digestOf(shape, frame, at + 1, end));
                return lastPrepared;
            }
            default -> {
                return null;
            }
        }
    }

    /**
     * The digest of the statement the client prepared as {@code id} (its id as the client knows it; -1: the one
     * prepared last), or {@code null} when the session does not know it: query rules find an execution's statement
     * here. On the session's loop.
     */
    public SqlDigest preparedDigest(int id) {
        if (id == LAST_PREPARED) {
            return lastPrepared == null ? null : lastPrepared.digest;
        }
        int slot = slot(id);
        return slot < 0 ? null : digests[slot];
    }

    /** The shape of the statement {@link #preparedDigest} finds; meaningful only when that is not {@code null}. */
    public long preparedShape(int id) {
        if (id == LAST_PREPARED) {
            return lastPrepared == null ? 0 : lastPrepared.shape;
        }
        int slot = slot(id);
        return slot < 0 ? 0 : shapes[slot];
    }

    /**
     * A client command arrived, before the session's policy sees it (which may answer it, as transaction pooling
     * answers COM_STMT_CLOSE and COM_RESET_CONNECTION): the statements the client closes are forgotten here, so that
     * the table of prepared statements holds only those the client may still execute.
     */
    public void onArrival(int command, ByteBuf frame) {
        if (command == Command.COM_STMT_CLOSE) {
            int at = frame.readerIndex() + Packets.HEADER_SIZE;
            if (frame.writerIndex() - at >= 5 && frame.getIntLE(at + 1) != LAST_PREPARED) {
                remove(frame.getIntLE(at + 1));
            }
        } else if (command == Command.COM_RESET_CONNECTION) {
            forgetStatements();
        }
    }

    /**
     * The session got pinned to its backend connection. A pin found in a statement (transaction pooling reads it
     * before the statement is sent) counts for that statement; one found in a response, for the statement answered
     * last.
     *
     * @param byResponse whether the response, not the statement's text, caused it
     */
    public void pinned(boolean byResponse) {
        if (byResponse) {
            if (last != null) {
                last.pinned();
            }
        } else {
            pinsAhead++;
        }
    }

    private DigestCounters found(DigestCounters entry) {
        last = entry;
        while (pinsAhead > 0) {
            entry.pinned();
            pinsAhead--;
        }
        return entry;
    }

    private DigestScope scope(String user, String schema, String group) {
        // identity: the session's strings change object when they change value, and rarely
        if (scope == null || user != this.user || schema != this.schema || group != this.group) {
            this.user = user;
            this.schema = schema;
            this.group = group;
            scope = table.owner().scope(user, schema, group);
        }
        return scope;
    }

    // ---- prepared statements by client id ----

    private void prepared(long statementId, long shape, SqlDigest digest) {
        int id = (int) statementId;
        if (id == FREE || id == GONE) {
            return;
        }
        int existing = slot(id);
        if (existing >= 0) {
            shapes[existing] = shape;
            digests[existing] = digest;
            return;
        }
        if ((used + 1) * 2 > ids.length) {
            if (live() >= MAX_PREPARED) {
                forgetStatements(); // a client that never closes its statements: start again rather than grow
            } else {
                rehash(live() * 2 + 2 > ids.length ? ids.length * 2 : ids.length);
            }
        }
        int mask = ids.length - 1;
        int i = mix(id) & mask;
        while (ids[i] != FREE && ids[i] != GONE) {
            i = (i + 1) & mask;
        }
        if (ids[i] == FREE) {
            used++;
        }
        ids[i] = id;
        shapes[i] = shape;
        digests[i] = digest;
    }

    private int slot(int id) {
        if (id == FREE) {
            return -1;
        }
        int mask = ids.length - 1;
        for (int i = mix(id) & mask, probes = 0; probes < ids.length; i = (i + 1) & mask, probes++) {
            if (ids[i] == id) {
                return i;
            }
            if (ids[i] == FREE) {
                return -1;
            }
        }
        return -1;
    }

    private void remove(int id) {
        int slot = slot(id);
        if (slot >= 0) {
            ids[slot] = GONE; // a tombstone: probes pass over it
            digests[slot] = null;
        }
    }

    /** Statements known now (tombstones left out). */
    private int live() {
        int n = 0;
        for (int id : ids) {
            if (id != FREE && id != GONE) {
                n++;
            }
        }
        return n;
    }

    private void forgetStatements() {
        ids = new int[16];
        shapes = new long[16];
        digests = new SqlDigest[16];
        used = 0;
    }

    private void rehash(int capacity) {
        int[] oldIds = ids;
        long[] oldShapes = shapes;
        SqlDigest[] oldDigests = digests;
        ids = new int[capacity];
        shapes = new long[capacity];
        digests = new SqlDigest[capacity];
        used = 0;
        for (int i = 0; i < oldIds.length; i++) {
            if (oldIds[i] != FREE && oldIds[i] != GONE) {
                prepared(oldIds[i], oldShapes[i], oldDigests[i]);
            }
        }
    }

    private static int mix(int id) {
        return id * 0x9E3779B9 >>> 16;
    }

    /** A COM_STMT_PREPARE in flight: its OK tells the id the client will execute it by. */
    private static final class Prepare implements StatementRecord {
        private final SessionDigests session;
        private final long shape;
        private final SqlDigest digest;

        Prepare(SessionDigests session, long shape, SqlDigest digest) {
            this.session = session;
            this.shape = shape;
            this.digest = digest;
        }

        @Override
        public void completed(long nanos, long nowNanos, boolean failed, int warnings, long rows, long affectedRows,
                long statementId, boolean replica) {
            if (!failed && statementId != 0) {
                session.prepared(statementId, shape, digest);
            }
        }
    }
}
