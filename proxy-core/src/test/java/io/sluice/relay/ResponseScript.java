package io.sluice.relay;

import io.sluice.testing.MySqlWire;
import java.util.ArrayList;
import java.util.List;

/**
 * A backend's byte stream for a series of commands, written packet by packet with correct headers and sequence ids,
 * together with what a tracker must report while following it: the kind announced for each command, the events in
 * order, the offset just past the last byte of each command's final packet, and the status flags each leaves.
 */
final class ResponseScript {
    /** Server status flags, short names for the tables of scripts. */
    static final int IN_TRANS = MySqlWire.SERVER_STATUS_IN_TRANS;
    static final int AUTOCOMMIT = MySqlWire.SERVER_STATUS_AUTOCOMMIT;
    static final int MORE_RESULTS = MySqlWire.SERVER_MORE_RESULTS_EXISTS;
    static final int CURSOR_EXISTS = MySqlWire.SERVER_STATUS_CURSOR_EXISTS;
    static final int LAST_ROW_SENT = MySqlWire.SERVER_STATUS_LAST_ROW_SENT;

    static final String INFILE = "infile";
    static final String COMPLETE = "complete";

    final String name;
    final boolean deprecateEof;
    /** MARIADB_CLIENT_CACHE_METADATA: every column count is followed by a "metadata follows" byte. */
    final boolean cacheMetadata;
    final List<ResponseKind> kinds = new ArrayList<>();
    final List<String> events = new ArrayList<>();
    /** For each command, the stream offset just past its final packet. */
    final List<Integer> ends = new ArrayList<>();
    /** For each command, the status flags the tracker must report once it completed. */
    final List<Integer> statuses = new ArrayList<>();

    private final MySqlWire.Frames out = new MySqlWire.Frames(1);
    private int status;

    ResponseScript(String name, boolean deprecateEof) {
        this(name, deprecateEof, false);
    }

    ResponseScript(String name, boolean deprecateEof, boolean cacheMetadata) {
        this.name = name;
        this.deprecateEof = deprecateEof;
        this.cacheMetadata = cacheMetadata;
    }

    byte[] bytes() {
        return out.toBytes();
    }

    int size() {
        return out.size();
    }

    /** Starts the response to a command the client sent with sequence id 0. */
    ResponseScript command(ResponseKind kind) {
        kinds.add(kind);
        out.sequenceId(1);
        return this;
    }

    /** Ends the current command's response: the tracker must complete exactly here. */
    ResponseScript done() {
        events.add(COMPLETE);
        ends.add(out.size());
        statuses.add(status);
        return this;
    }

    /** Several packets in a row, each as {@link #packet}. */
    ResponseScript packets(List<byte[]> payloads) {
        out.packets(payloads);
        return this;
    }

    /** One logical packet, split into 16 MiB - 1 frames (and an empty last frame when it divides evenly). */
    ResponseScript packet(byte[] payload) {
        out.packet(payload);
        return this;
    }

    ResponseScript ok(int status) {
        this.status = status;
        return packet(MySqlWire.ok(status));
    }

    ResponseScript ok(long affectedRows, long lastInsertId, int status, String info) {
        this.status = status;
        return packet(MySqlWire.ok(affectedRows, lastInsertId, status, 0, info));
    }

    ResponseScript err() {
        return packet(MySqlWire.err(1146, "42S02", "Table 'db.nope' doesn't exist"));
    }

    /** The EOF (or, with CLIENT_DEPRECATE_EOF, the OK headed 0xFE) that ends rows. */
    ResponseScript terminator(int status) {
        this.status = status;
        return packet(MySqlWire.endOfRows(deprecateEof, status));
    }

    /** Column count and definitions, and the EOF after them unless CLIENT_DEPRECATE_EOF is on. */
    ResponseScript metadata(int columns, int metadataEofStatus) {
        packet(columnCount(columns, true));
        for (int i = 0; i < columns; i++) {
            packet(MySqlWire.columnDefinition("c" + i, 3));
        }
        if (!deprecateEof) {
            status = metadataEofStatus;
            packet(MySqlWire.eof(metadataEofStatus));
        }
        return this;
    }

    /**
     * MariaDB's result metadata without the column definitions (MARIADB_CLIENT_CACHE_METADATA, "metadata follows"
     * 0): the column count, then the EOF unless CLIENT_DEPRECATE_EOF is on.
     */
    ResponseScript metadataSkipped(int columns, int metadataEofStatus) {
        packet(columnCount(columns, false));
        if (!deprecateEof) {
            status = metadataEofStatus;
            packet(MySqlWire.eof(metadataEofStatus));
        }
        return this;
    }

    /** A whole binary result set whose column definitions the server left out: see {@link #metadataSkipped}. */
    ResponseScript resultSetSkippingMetadata(int columns, List<byte[]> rows, int status) {
        metadataSkipped(columns, status);
        rows.forEach(this::packet);
        return terminator(status);
    }

    /** A column count, with MariaDB's "metadata follows" byte when the script has MARIADB_CLIENT_CACHE_METADATA. */
    private byte[] columnCount(int columns, boolean metadataFollows) {
        if (!cacheMetadata && !metadataFollows) {
            throw new IllegalStateException("metadata can only be skipped with MARIADB_CLIENT_CACHE_METADATA");
        }
        return cacheMetadata ? MySqlWire.columnCount(columns, metadataFollows) : MySqlWire.columnCount(columns);
    }

    /** A whole result set: metadata, rows, terminator. */
    ResponseScript resultSet(int columns, List<byte[]> rows, int status) {
        metadata(columns, status);
        rows.forEach(this::packet);
        return terminator(status);
    }

    /** COM_STMT_EXECUTE opening a cursor: metadata, then EOF (or OK) with SERVER_STATUS_CURSOR_EXISTS, no rows. */
    ResponseScript cursorOpened(int columns, int status) {
        packet(columnCount(columns, true));
        for (int i = 0; i < columns; i++) {
            packet(MySqlWire.columnDefinition("c" + i, 3));
        }
        return terminator(status | CURSOR_EXISTS);
    }

    /** A cursor opened by an execute whose column definitions the server left out (MARIADB_CLIENT_CACHE_METADATA). */
    ResponseScript cursorOpenedSkippingMetadata(int columns, int status) {
        packet(columnCount(columns, false));
        return terminator(status | CURSOR_EXISTS);
    }

    /** COM_STMT_FETCH: binary rows and a terminator. */
    ResponseScript fetched(List<byte[]> rows, int status) {
        rows.forEach(this::packet);
        return terminator(status);
    }

    /** COM_STMT_PREPARE_OK, then parameter and column definitions, each block ended by EOF unless deprecated. */
    ResponseScript prepared(int params, int columns) {
        packet(MySqlWire.prepareOk(7, columns, params, 0));
        definitions(params);
        return definitions(columns);
    }

    /** COM_FIELD_LIST: column definitions ended by EOF (an OK headed 0xFE with CLIENT_DEPRECATE_EOF). */
    ResponseScript fieldList(int columns) {
        for (int i = 0; i < columns; i++) {
            packet(MySqlWire.columnDefinition("f" + i, 253));
        }
        return packet(MySqlWire.endOfRows(deprecateEof, status));
    }

    private ResponseScript definitions(int count) {
        for (int i = 0; i < count; i++) {
            packet(MySqlWire.columnDefinition("p" + i, 3));
        }
        if (count > 0 && !deprecateEof) {
            packet(MySqlWire.eof(status)); // same flags as before: the tracker need not read them
        }
        return this;
    }

    /**
     * LOCAL INFILE request. The client then sends the file and an empty packet (sequence ids the server's answer
     * continues from); the tracker sees only the backend's side.
     */
    ResponseScript localInfile(String fileName) {
        events.add(INFILE);
        packet(MySqlWire.localInfile(fileName));
        out.sequenceId(out.sequenceId() + 2);
        return this;
    }

    @Override
    public String toString() {
        return name + (deprecateEof ? " [CLIENT_DEPRECATE_EOF]" : " [EOF]")
                + (cacheMetadata ? " [MARIADB_CLIENT_CACHE_METADATA]" : "");
    }
}
