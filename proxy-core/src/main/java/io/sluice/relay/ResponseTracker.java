package io.sluice.relay;

import io.netty.buffer.ByteBuf;
import io.sluice.protocol.Packets;
import io.sluice.protocol.ProtocolException;
import io.sluice.protocol.ServerStatus;

/**
 * Follows a backend's responses as they stream past, without buffering or copying them, so the connection always
 * knows whether it is idle, inside a transaction, or in the middle of a response.
 *
 * <p>It reads only packet headers and the first few payload bytes of each packet (TiProxy's idea of classifying a
 * packet from its first bytes): enough to tell OK, ERR, EOF and LOCAL INFILE packets apart, to count column
 * definitions, and to read the status flags that end a result. Rows are never parsed. Bytes may arrive split
 * anywhere, even inside a header; the tracker carries its position from one buffer to the next.
 *
 * <p>It follows one response at a time: its owner {@link #begin begins} each one, and is told through its
 * {@link ResponseListener} when it is complete, at which point the owner begins the next (pipelined commands wait
 * in the owner's in-flight queue, not here). The tracker does the framing and the response state only: features that
 * read more (a capture's sums, transaction pooling's {@link StateReading}, a digest of column definitions) are
 * {@link ResponseWatch watches} it tells what it classified. Not thread-safe: it lives on its connection's event loop.
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_query_response.html">COM_QUERY
 *     response</a>
 */
public final class ResponseTracker {

    private final boolean deprecateEof;
    private final boolean cacheMetadata;
    private final ResponseListener listener;

    private ResponseState state = ResponseState.IDLE;
    private ResponseKind currentKind;

    private int headerFill;
    /** The packet header being read: payload length in the low three bytes, sequence id in the high one. */
    private int headerValue;
    /** Where the packet being read starts in the buffer being scanned; -1 when it began in an earlier one. */
    private int packetStart;
    private int payloadLength;
    private int payloadRemaining;
    private boolean continuation;
    private boolean nextIsContinuation;
    private final PacketHead head = new PacketHead();
    /** What watches are told of the packet classified; its row count is kept for them, whether or not any watch. */
    private final ResponsePacket packet;
    private final ResponseWatches watches = new ResponseWatches();
    /** A watch wants the payload of the packet being read. */
    private boolean packetWatched;

    private long countdown;
    private int prepareColumns;
    private int serverStatus;
    private boolean responseStarted;
    /** A response ended with the packet being read: tell the listener once its last byte has passed. */
    private boolean completedInPacket;
    /** That packet's last byte has passed: {@link #scan} tells the listener before it reads on. */
    private boolean responseEnded;
    /** What the response being read (then the last one) amounts to. */
    private final ResponseOutcome outcome = new ResponseOutcome();
    /** Made at the first response summed up, or digested, here. */
    private ResponseSummary summary;
    private DefinitionsDigesting digesting;
    private final StateReading stateReading;

    /**
     * @param deprecateEof whether CLIENT_DEPRECATE_EOF was negotiated: result metadata then has no EOF and results
     *     end with an OK packet headed 0xFE
     * @param cacheMetadata whether MariaDB's MARIADB_CLIENT_CACHE_METADATA was negotiated: a column count is then
     *     followed by a "metadata follows" byte, and when it is 0 the column definitions are left out (MariaDB skips
     *     them on COM_STMT_EXECUTE when they have not changed since the client last had them)
     * @param listener told about LOCAL INFILE requests and finished responses
     * @see <a href="https://mariadb.com/kb/en/result-set-packets/#column-count-packet">Column count packet</a>
     */
    public ResponseTracker(boolean deprecateEof, boolean cacheMetadata, ResponseListener listener) {
        this(deprecateEof, cacheMetadata, listener, listener);
    }

    /**
     * A tracker whose reports of session state go to their own listener.
     *
     * @param stateListener told about the session state the server reports, while {@link StateReading#follow following}
     */
    public ResponseTracker(boolean deprecateEof, boolean cacheMetadata, ResponseListener listener,
            SessionStateListener stateListener) {
        this.deprecateEof = deprecateEof;
        this.cacheMetadata = cacheMetadata;
        this.listener = listener;
        this.packet = new ResponsePacket(head, deprecateEof);
        this.stateReading = new StateReading(stateListener, watches, packet);
    }

    /**
     * Begins following the response to a command just forwarded. Call only when no response is being followed
     * ({@link #isFollowing()} false): the tracker's owner queues pipelined commands and begins each one when the
     * previous completes.
     *
     * @throws IllegalStateException when a response is still being followed
     * @throws IllegalArgumentException for {@link ResponseKind#NONE}: such a command has nothing to follow
     */
    public void begin(ResponseKind kind) {
        if (state != ResponseState.IDLE) {
            throw new IllegalStateException("begin " + kind + ": still following a " + currentKind + " response");
        }
        currentKind = kind;
        responseStarted = false;
        watches.responseBegins();
        packet.rows = 0;
        outcome.clear();
        state = switch (kind) {
            case RESULT, BINARY_RESULT -> ResponseState.RESULT_FIRST;
            case ROWS -> rowsState();
            case PREPARE -> ResponseState.PREPARE_OK;
            case FIELD_LIST -> ResponseState.FIELD_LIST;
            case SINGLE -> ResponseState.SINGLE;
            default -> throw new IllegalArgumentException("kind: " + kind + " (expected: a response to follow)");
        };
    }

    /**
     * Shows the client {@code clientStatementId} in place of the server's statement id in the COM_STMT_PREPARE_OK
     * being followed: the id's bytes are overwritten in the buffers {@link #scan} passes, as they pass, so the
     * response is still relayed without a copy (transaction pooling gives statements ids of the session's own). The
     * server's id stays readable as {@link ResponseOutcome#serverStatementId()}. Call right after {@code begin(PREPARE)}.
     */
    public void replaceStatementId(int clientStatementId) {
        if (state != ResponseState.PREPARE_OK || responseStarted) {
            throw new IllegalStateException("replaceStatementId: not at the start of a COM_STMT_PREPARE response");
        }
        outcome.replacementStatementId = clientStatementId;
    }

    /**
     * Digests the column definitions of the response being followed, those of a COM_STMT_PREPARE_OK or those a
     * result carries (MariaDB leaves them out when the client has them already): read from
     * {@link ResponseOutcome#definitionsSent()} and {@link ResponseOutcome#definitionsDigest()} when it completes.
     * Call right after {@link #begin}.
     *
     * @param required whether a result that leaves its definitions out is a protocol failure: the statement moved
     *     to a server expected to send them, and the client's own would misread the rows
     */
    public void digestDefinitions(boolean required) {
        if (digesting == null) {
            digesting = new DefinitionsDigesting(outcome);
        }
        watchResponse(digesting);
        digesting.start(required, currentKind == ResponseKind.PREPARE);
    }

    /**
     * Adds a watch of the response just begun only (a feature of one statement's): call right after {@link #begin}.
     *
     * @throws IllegalStateException when bytes of the response have passed
     */
    public void watchResponse(ResponseWatch watch) {
        if (responseStarted) {
            throw new IllegalStateException("watchResponse: the response has started");
        }
        watches.addForResponse(watch);
        state = state == ResponseState.ROWS ? rowsState() : state;
    }

    /** Whether a response has been begun and is not complete yet. */
    public boolean isFollowing() {
        return state != ResponseState.IDLE;
    }

    /** No response is being followed and no packet is half read. */
    public boolean isIdle() {
        return state == ResponseState.IDLE && headerFill == 0 && payloadRemaining == 0;
    }

    /** Some bytes of the response now followed have already passed. */
    public boolean isResponseStarted() {
        return responseStarted;
    }

    /** The status flags of the last OK or EOF packet seen. */
    public int serverStatus() {
        return serverStatus;
    }

    /** What the response that completed last amounted to; valid until the next one begins. */
    public ResponseOutcome outcome() {
        return outcome;
    }

    /** Whether the response that completed last was, or ended with, an ERR packet. */
    public boolean lastResponseFailed() {
        return outcome.failed;
    }

    /**
     * Starts or stops summing up each response: affected rows, rows and the prepared statement id (a traffic capture
     * records them). Change it only between responses, so that every response is summed whole.
     */
    public void summarize(boolean on) {
        if (on) {
            watch(summary == null ? summary = new ResponseSummary(outcome, packet) : summary);
        } else if (summary != null) {
            unwatch(summary);
        }
    }

    /**
     * Adds a feature that follows responses with the tracker, until {@link #unwatch removed}: it hears of the packets
     * classified from the next one on (of rows, from the next result set's on). Adding it twice adds it once.
     */
    public void watch(ResponseWatch watch) {
        watches.add(watch);
    }

    /** Removes a watch {@link #watch added}; it hears nothing more, but the end of a read it heard start. */
    public void unwatch(ResponseWatch watch) {
        watches.remove(watch);
    }

    /**
     * What the tracker reads of the session state the server reports (transaction pooling): turned on and off there,
     * only between responses.
     */
    public StateReading sessionState() {
        return stateReading;
    }

    /** Whether the server last reported an open transaction. */
    public boolean inTransaction() {
        return (serverStatus & ServerStatus.SERVER_STATUS_IN_TRANS) != 0;
    }

    /**
     * Follows the readable bytes of {@code buf} (borrowed: indexes are not moved, nothing is retained).
     *
     * @throws ProtocolException when the backend sends a packet nobody asked for
     */
    public void scan(ByteBuf buf) {
        final int end = buf.writerIndex();
        packetStart = -1;
        final boolean watched = watches.any;
        if (watched) {
            watches.readStarted();
        }
        for (int i = buf.readerIndex(); i < end; ) {
            i = follow(buf, i, end);
            if (responseEnded) {
                responseEnded = false;
                listener.onResponseComplete();
            }
        }
        if (watched) {
            watches.readEnded(this);
        }
    }

    /**
     * Follows {@code buf} from {@code i} to {@code end}, and stops early just past a packet that completed a response,
     * so that {@link #scan} tells the listener between the two. The listener's work stays out of this method's
     * compiled code: when C2 inlined a backend connection's completion handling here, the row-skipping loop below
     * ran at about 0.6 times its speed (BackendRelayBenchmark, 1,000-row results).
     *
     * @return the index of the first byte not followed
     */
    private int follow(ByteBuf buf, int i, final int end) {
        while (i < end) {
            if (state == ResponseState.ROWS && headerFill == 0 && !nextIsContinuation) {
                long skipped = RowSkipping.skip(buf, i, end);
                skipped(RowSkipping.rows(skipped));
                i = RowSkipping.index(skipped);
                if (i >= end) {
                    break;
                }
            }
            if (headerFill < Packets.HEADER_SIZE) {
                if (headerFill == 0 && state == ResponseState.IDLE) {
                    // At the first byte, not the fourth: the relay writes what a scan passed to the client, and
                    // the start of a header nobody asked for must not reach it (or another session's client).
                    throw unexpectedWhileIdle();
                }
                if (headerFill == 0 && end - i >= Packets.HEADER_SIZE) {
                    packetStart = i;
                    headerValue = buf.getIntLE(i);
                    i += Packets.HEADER_SIZE;
                    headerFill = Packets.HEADER_SIZE;
                } else {
                    if (headerFill == 0) {
                        packetStart = i;
                    }
                    headerValue |= buf.getUnsignedByte(i++) << (8 * headerFill);
                    headerFill++;
                    if (headerFill < Packets.HEADER_SIZE) {
                        continue;
                    }
                }
                beginPayload();
                if (payloadRemaining == 0 && endPacket(i)) {
                    return i;
                }
                continue;
            }
            int n;
            if (head.fill < head.wanted) {
                n = Math.min(head.wanted - head.fill, end - i);
                buf.getBytes(i, head.bytes, head.fill, n);
                if (outcome.replacementStatementId != 0 && state == ResponseState.PREPARE_OK) {
                    head.overwriteStatementId(buf, i, n, outcome.replacementStatementId);
                }
                head.fill += n;
                if (head.fill == head.wanted) {
                    classify();
                }
            } else {
                n = Math.min(payloadRemaining, end - i);
                if (packetWatched) {
                    watches.payload(buf, i, n);
                }
            }
            i += n;
            payloadRemaining -= n;
            if (payloadRemaining == 0 && endPacket(i)) {
                return i;
            }
        }
        return i;
    }

    /** Notes rows passed over by {@link RowSkipping}: once per call, not per row. */
    private void skipped(int passed) {
        responseStarted |= passed > 0;
        packet.rows += passed;
    }

    private void beginPayload() {
        if (state == ResponseState.IDLE) {
            throw unexpectedWhileIdle();
        }
        responseStarted = true;
        int length = headerValue & Packets.MAX_PAYLOAD;
        payloadLength = length;
        payloadRemaining = length;
        continuation = nextIsContinuation;
        nextIsContinuation = length == Packets.MAX_PAYLOAD;
        head.fill = 0;
        head.wanted = continuation || !needsHead() ? 0 : Math.min(payloadLength, PacketHead.MAX);
        if (head.wanted == 0) {
            classify();
        }
    }

    /** A packet's last byte has passed, just before {@code i}; whether it completed a response. */
    private boolean endPacket(int i) {
        headerFill = 0;
        if (packetWatched) {
            packetWatched = false;
            watches.packetEnded(i, headerValue >>> 24);
        }
        headerValue = 0;
        if (completedInPacket) {
            completedInPacket = false;
            responseEnded = true;
            if (watches.any) {
                watches.responseEnded(outcome, i);
            }
        }
        return responseEnded;
    }

    private boolean needsHead() {
        return state != ResponseState.COLUMNS && state != ResponseState.PREPARE_PARAMS
                && state != ResponseState.PREPARE_COLUMNS;
    }

    private void classify() {
        if (continuation) {
            return; // the rest of a 16 MiB+ packet, already classified by its first frame
        }
        int first = head.first();
        if (first == Packets.ERR_HEADER) {
            outcome.failed = true; // no row, column definition or status string starts with 0xFF
        }
        switch (state) {
            case RESULT_FIRST -> {
                if (first == Packets.OK_HEADER) {
                    if (watches.any) {
                        tell(ResponsePacket.Role.STATEMENT_OK);
                    }
                    endOfResult(head.okStatus(serverStatus));
                } else if (first == Packets.ERR_HEADER) {
                    errorOutcome();
                    complete();
                } else if (first == Packets.LOCAL_INFILE_HEADER) {
                    // the server answers the upload with OK or ERR: still the first packet of this result
                    listener.onLocalInfileRequest();
                } else {
                    countdown = head.lenenc(0);
                    boolean metadataFollows = !cacheMetadata || head.metadataFollows();
                    if (watches.any) {
                        packet.columns = countdown;
                        packet.metadataFollows = metadataFollows;
                        tell(ResponsePacket.Role.COLUMN_COUNT);
                    }
                    if (!metadataFollows) {
                        countdown = 0; // no column definitions: straight to their EOF, or to the rows without one
                        state = deprecateEof ? rowsState() : ResponseState.COLUMNS_EOF;
                    } else {
                        state = countdown > 0 ? ResponseState.COLUMNS : rowsState();
                    }
                }
            }
            case COLUMNS -> {
                if (watches.any) {
                    tell(ResponsePacket.Role.COLUMN_DEFINITION);
                }
                if (--countdown == 0) {
                    state = deprecateEof ? rowsState() : ResponseState.COLUMNS_EOF;
                }
            }
            case COLUMNS_EOF -> {
                if (first == Packets.ERR_HEADER) {
                    errorOutcome();
                    complete();
                } else {
                    serverStatus = head.eofStatus(serverStatus);
                    if (currentKind == ResponseKind.BINARY_RESULT
                            && (serverStatus & ServerStatus.SERVER_STATUS_CURSOR_EXISTS) != 0) {
                        complete(); // a cursor opened: rows come later, through COM_STMT_FETCH
                    } else {
                        state = rowsState();
                    }
                }
            }
            case ROWS, ROWS_WATCHED -> {
                if (first == Packets.EOF_HEADER && payloadLength < Packets.MAX_PAYLOAD) {
                    if (watches.any) {
                        tell(ResponsePacket.Role.END_OF_ROWS);
                    }
                    endOfResult(deprecateEof ? head.okStatus(serverStatus) : head.eofStatus(serverStatus));
                } else if (first == Packets.ERR_HEADER) {
                    errorOutcome();
                    complete();
                } else {
                    if (state == ResponseState.ROWS_WATCHED) {
                        tell(ResponsePacket.Role.ROW);
                    }
                    packet.rows++;
                }
            }
            case PREPARE_OK -> {
                if (first != Packets.OK_HEADER || head.fill < 9) {
                    errorOutcome();
                    complete(); // ERR
                } else {
                    outcome.statementId = head.u16(1) | (long) head.u16(3) << 16;
                    prepareColumns = head.u16(5);
                    outcome.parameters = head.u16(7);
                    countdown = outcome.parameters;
                    afterPrepareOk();
                }
            }
            case PREPARE_PARAMS -> {
                if (--countdown == 0) {
                    state = deprecateEof ? ResponseState.PREPARE_COLUMNS : ResponseState.PREPARE_PARAMS_EOF;
                    if (deprecateEof) {
                        startPrepareColumns();
                    }
                }
            }
            case PREPARE_PARAMS_EOF -> startPrepareColumns();
            case PREPARE_COLUMNS -> {
                if (watches.any) {
                    tell(ResponsePacket.Role.COLUMN_DEFINITION);
                }
                if (--countdown == 0) {
                    if (deprecateEof) {
                        complete();
                    } else {
                        state = ResponseState.PREPARE_COLUMNS_EOF;
                    }
                }
            }
            case PREPARE_COLUMNS_EOF -> complete();
            case FIELD_LIST -> {
                if ((first == Packets.EOF_HEADER && payloadLength < Packets.MAX_PAYLOAD)
                        || first == Packets.ERR_HEADER) {
                    errorOutcome();
                    complete();
                }
            }
            case SINGLE -> {
                if (first == Packets.OK_HEADER) {
                    if (watches.any) {
                        tell(ResponsePacket.Role.STATEMENT_OK);
                    }
                    serverStatus = head.okStatus(serverStatus);
                } else if (first == Packets.EOF_HEADER && payloadLength < 9) {
                    serverStatus = head.eofStatus(serverStatus);
                } else {
                    errorOutcome();
                }
                complete();
            }
            default -> throw new ProtocolException("backend packet: unexpected in state " + state);
        }
    }

    /** Tells the watches of the packet just classified, before the tracker acts on it. */
    private void tell(ResponsePacket.Role role) {
        ResponsePacket p = packet;
        p.role = role;
        p.payloadLength = payloadLength;
        p.start = packetStart;
        p.serverStatus = serverStatus;
        packetWatched = watches.packet(p);
    }

    /** The state of rows: each classified while a watch wants to see them, else passed over many at a time. */
    private ResponseState rowsState() {
        return watches.rows ? ResponseState.ROWS_WATCHED : ResponseState.ROWS;
    }

    private void afterPrepareOk() {
        if (countdown > 0) {
            state = ResponseState.PREPARE_PARAMS;
        } else {
            startPrepareColumns();
        }
    }

    private void startPrepareColumns() {
        countdown = prepareColumns;
        if (countdown > 0) {
            state = ResponseState.PREPARE_COLUMNS;
        } else {
            complete();
        }
    }

    private void endOfResult(int status) {
        serverStatus = status;
        if ((status & ServerStatus.SERVER_MORE_RESULTS_EXISTS) != 0) {
            state = ResponseState.RESULT_FIRST;
        } else {
            complete();
        }
    }

    /** Notes the error code of the ERR packet in the head, if this packet is one. */
    private void errorOutcome() {
        if (head.fill >= 3 && (head.bytes[0] & 0xFF) == Packets.ERR_HEADER) {
            outcome.errorCode = head.u16(1);
        }
    }

    /**
     * The response ends with the packet being classified: the tracker goes idle, and the listener hears of it once
     * the packet's last byte has passed ({@link #endPacket}).
     */
    private void complete() {
        state = ResponseState.IDLE;
        responseStarted = false;
        completedInPacket = true;
    }

    /**
     * Where the packet being read starts, when a read ends before its first bytes tell whether it is an OK packet
     * the {@link OkRewriter} must replace ({@code -1}: it began in an earlier read); else {@code Integer.MIN_VALUE}
     * ({@code OkRewriter.NO_HOLD}). For a watch, at the end of a read ({@link ResponseWatch#readEnded}).
     * Only an OK may carry session state: the first packet of a result, a single OK/ERR answer, or (with
     * CLIENT_DEPRECATE_EOF) the OK headed 0xFE that ends rows.
     */
    public int undecidedOkStart() {
        if (headerFill == 0 || continuation || (headerFill == Packets.HEADER_SIZE && head.fill >= head.wanted)) {
            return OkRewriter.NO_HOLD; // between packets, or the packet is classified already
        }
        int first = headerFill == Packets.HEADER_SIZE ? head.first() : -1;
        boolean mayBeOk = state == ResponseState.RESULT_FIRST || state == ResponseState.SINGLE
                ? first == -1 || first == Packets.OK_HEADER
                : (state == ResponseState.ROWS || state == ResponseState.ROWS_WATCHED) && deprecateEof
                        && (first == -1 || first == Packets.EOF_HEADER);
        return mayBeOk ? packetStart : OkRewriter.NO_HOLD;
    }

    private static ProtocolException unexpectedWhileIdle() {
        return new ProtocolException("backend packet: unexpected (expected: no data while idle)");
    }
}
