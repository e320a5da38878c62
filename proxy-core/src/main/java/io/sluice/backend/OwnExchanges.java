package io.sluice.backend;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.sluice.codec.FrameReader;
import io.sluice.relay.OkRewriter;
import io.sluice.relay.ResponseTracker;
import java.util.Arrays;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A backend connection's exchanges of whole packets: the login's, and those of Sluice's own commands
 * ({@link OwnCommand}), whose responses are collected packet by packet and handed to them, never relayed. The
 * connection's relay handles the client's responses; this handles everything else the server says, and treats bytes
 * nobody asked for as an unknown state: the connection closes. On the connection's event loop.
 */
final class OwnExchanges {
    /** How many times commands were run here: see {@link BackendConnection#ownRuns()}. */
    private long runs;


    private static final Logger log = LoggerFactory.getLogger(BackendConnection.class);
    /** Sluice's own commands get small answers; a larger one means a broken stream. */
    private static final int MAX_OWN_PACKET = 16 * 1024 * 1024;

    private final BackendConnection connection;
    private final InFlightCommands inFlight;
    private final ResponseTracker tracker;
    private final FrameReader frames = new FrameReader(MAX_OWN_PACKET);
    /** Bytes of a response not yet a whole packet. */
    private ByteBuf cumulation;

    OwnExchanges(BackendConnection connection, InFlightCommands inFlight, ResponseTracker tracker) {
        this.connection = connection;
        this.inFlight = inFlight;
        this.tracker = tracker;
    }

    /** See {@link BackendConnection#run(OwnCommand...)}. */
    long runs() {
        return runs;
    }

    void run(OwnCommand... commands) {
        runs++;
        Channel channel = connection.channel();
        if (!connection.isOpen()) {
            BackendException closed = new BackendException("connection to " + connection.address() + " is closed");
            for (OwnCommand command : commands) {
                command.fail(closed);
            }
            return;
        }
        if (inFlight.hasClientCommands()) {
            // The session's and Sluice's responses would be mixed: a bug, and the connection's state is unknown.
            log.warn("{}: own commands {} sent behind a client's response; closing the connection", connection,
                    Arrays.toString(commands));
            BackendException error = new BackendException("own command behind a client's on " + connection.address());
            for (OwnCommand command : commands) {
                command.fail(error);
            }
            channel.close();
            return;
        }
        channel.config().setAutoRead(true); // relay backpressure may have paused reading; the answers must be read
        for (OwnCommand command : commands) {
            inFlight.add(command.response(), command, 0);
            channel.write(command.encode(channel.alloc()), channel.voidPromise());
        }
        channel.flush();
    }

    /** The login's packets, and the responses to Sluice's own commands, as whole packets (taken). */
    void read(ByteBuf buf) {
        Channel channel = connection.channel();
        if (!expectsPackets()) {
            buf.release();
            closeOnUnsolicitedBytes();
            return;
        }
        cumulation = ByteToMessageDecoder.MERGE_CUMULATOR.cumulate(channel.alloc(),
                cumulation == null ? Unpooled.EMPTY_BUFFER : cumulation, buf);
        try {
            for (ByteBuf frame; cumulation != null && (frame = frames.next(cumulation)) != null; ) {
                BackendLogin login = connection.login();
                if (login != null && login.isAuthenticating()) {
                    login.onPacket(frame);
                } else if (inFlight.ownCommands() > 0) {
                    inFlight.headCommand().add(frame); // the command collects the packets of its response
                    tracker.scan(frame); // may end the response, which hands them over
                    OkRewriter rewriter = connection.okRewriter();
                    if (rewriter != null) {
                        rewriter.discard(); // Sluice's own: nothing of it reaches the client
                    }
                } else {
                    frame.release();
                    // An idle server has nothing to say: a timeout notice or garbage. Unknown state: close.
                    closeOnUnsolicitedBytes();
                    break;
                }
            }
        } catch (BackendException e) {
            connection.failed(e);
        } catch (RuntimeException e) {
            connection.failed(new BackendException("protocol error from " + connection.address() + ": "
                    + e.getMessage(), e));
        } finally {
            if (cumulation != null && !cumulation.isReadable()) {
                release();
            } else if (cumulation != null && !expectsPackets() && channel.isOpen()) {
                // Part of a packet after the last response anyone waits for: kept, it would be read as the start
                // of the next command's response (the relay never even looks at it). Unknown state: close.
                release();
                closeOnUnsolicitedBytes();
            }
        }
    }

    /** Whether anyone waits for the server's packets: the login's exchange, or one of Sluice's own commands. */
    private boolean expectsPackets() {
        BackendLogin login = connection.login();
        return (login != null && login.isAuthenticating()) || inFlight.ownCommands() > 0;
    }

    /**
     * The server sent bytes nobody asked for (a timeout notice, garbage), whole packets or not: the connection's state
     * is unknown, so it must never be lent again.
     */
    private void closeOnUnsolicitedBytes() {
        log.debug("backend {} sent data while nobody waited for it: closing it", connection);
        connection.channel().close();
    }

    /** Lets go of a half-read packet: the connection closed, or it is not wanted. */
    void release() {
        if (cumulation != null) {
            cumulation.release();
            cumulation = null;
        }
    }
}
