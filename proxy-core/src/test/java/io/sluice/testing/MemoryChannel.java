package io.sluice.testing;

import io.netty.buffer.ByteBuf;
import io.netty.channel.AbstractChannel;
import io.netty.channel.ChannelConfig;
import io.netty.channel.ChannelMetadata;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelPromise;
import io.netty.channel.DefaultChannelConfig;
import io.netty.channel.EventLoop;
import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One end of an in-memory connection, for a scripted peer: Sluice's handlers run in its pipeline as they would on a
 * socket, and the test stands at the other end. It delivers what the peer sends as reads ({@link #deliver}) and keeps
 * what Sluice wrote for the peer to take, packet by packet ({@link #nextPacket}).
 *
 * <p>Why not Netty's {@code EmbeddedChannel}: that one runs the event loop's queued tasks itself after every write,
 * flush and close made on it. A task Sluice queues (the pool serving a waiting session, a close) would then run nested
 * inside whatever wrote to the channel (the relay of a response), which a real event loop never does, and which the
 * give-back rule of the session core is precisely about. This channel never runs tasks: its {@link ScriptedLoop} runs
 * them between I/O events, as a loop turn does. Like a socket it stops reading while auto-read is off: what the peer
 * sends meanwhile waits and is read in a later turn once reading resumes.
 */
public final class MemoryChannel extends AbstractChannel {
    private static final ChannelMetadata METADATA = new ChannelMetadata(false);

    /** A packet Sluice wrote: its sequence id, its payload, and the stack of the flush that wrote its first byte. */
    public record Packet(int sequenceId, byte[] payload, StackTraceElement[] writtenFrom) {
        /** The first payload byte: a command, or a response's header (0x00 OK, 0xFF ERR, 0xFE EOF). */
        public int first() {
            return payload.length == 0 ? -1 : payload[0] & 0xFF;
        }

        /** Whether {@code method} of {@code type} was on the stack when the packet was written. */
        public boolean writtenWithin(Class<?> type, String method) {
            return Arrays.stream(writtenFrom)
                    .anyMatch(e -> e.getClassName().equals(type.getName()) && e.getMethodName().equals(method));
        }

        @Override
        public String toString() {
            return "Packet[seq " + sequenceId + ", " + payload.length + " bytes, first 0x" + Integer.toHexString(first())
                    + "]";
        }
    }

    /** Where a flush's bytes begin in {@link #written}, and who flushed them. */
    private record Write(int offset, StackTraceElement[] stack) {
    }

    private final DefaultChannelConfig config = new DefaultChannelConfig(this);
    private final InetSocketAddress local;
    private final InetSocketAddress remote;
    private final ByteArrayOutputStream written = new ByteArrayOutputStream();
    private final List<Write> writes = new ArrayList<>();
    private int readOffset;
    /** Bytes the peer sent while Sluice was not reading. */
    private final ArrayDeque<byte[]> unread = new ArrayDeque<>();
    private boolean unreadScheduled;
    private final boolean activeOnRegister;
    private boolean open = true;
    private boolean active;

    /**
     * @param local this end's address, as Sluice sees it
     * @param remote the peer's address, as Sluice sees it (a client's address for the login back-off and the logs)
     * @param activeOnRegister true for an accepted connection (a client's), connected when it is registered; false
     *     for one Sluice connects (a backend's), connected by {@link #connected()} in a later loop turn, as a TCP
     *     connect completes
     */
    public MemoryChannel(InetSocketAddress local, InetSocketAddress remote, boolean activeOnRegister) {
        super(null);
        this.local = local;
        this.remote = remote;
        this.activeOnRegister = activeOnRegister;
    }

    /** The connect completed: the channel becomes active (Sluice's {@code channelActive}). Call it from a loop task. */
    public void connected() {
        if (open && !active) {
            active = true;
            pipeline().fireChannelActive();
        }
    }

    // ---- the peer's side --------------------------------------------------------------------------------------

    /**
     * The peer sends {@code bytes}: read at once, as one read (one {@code channelRead}, one
     * {@code channelReadComplete}), or once Sluice reads again if it has stopped. Call it on the loop, between turns;
     * the loop's tasks are not run here.
     */
    public void deliver(byte[] bytes) {
        if (!open) {
            return; // a closed socket reads nothing
        }
        if (!config.isAutoRead() || !unread.isEmpty()) {
            unread.add(bytes); // behind what already waits
            if (config.isAutoRead()) {
                doBeginRead();
            }
            return;
        }
        read(bytes);
        pipeline().fireChannelReadComplete();
    }

    /** The peer closes its end (a server that dies, a client that vanishes): Sluice sees the channel go inactive. */
    public void peerClose() {
        if (open) {
            unsafe().close(voidPromise());
        }
    }

    /** The next whole packet Sluice wrote, or {@code null} when there is none (yet). */
    public Packet nextPacket() {
        byte[] all = written.toByteArray();
        if (all.length - readOffset < 4) {
            return null;
        }
        int length = (all[readOffset] & 0xFF) | (all[readOffset + 1] & 0xFF) << 8 | (all[readOffset + 2] & 0xFF) << 16;
        if (all.length - readOffset - 4 < length) {
            return null;
        }
        StackTraceElement[] stack = stackAt(readOffset);
        Packet packet = new Packet(all[readOffset + 3] & 0xFF,
                Arrays.copyOfRange(all, readOffset + 4, readOffset + 4 + length), stack);
        readOffset += 4 + length;
        return packet;
    }

    /** Bytes Sluice wrote that {@link #nextPacket} has not taken: a partial packet, or whole ones not yet read. */
    public int unreadWrittenBytes() {
        return written.size() - readOffset;
    }

    private StackTraceElement[] stackAt(int offset) {
        StackTraceElement[] found = new StackTraceElement[0];
        for (Write write : writes) {
            if (write.offset() <= offset) {
                found = write.stack();
            }
        }
        return found;
    }

    private void read(byte[] bytes) {
        ByteBuf buf = alloc().buffer(bytes.length).writeBytes(bytes); // pooled and leak-tracked, as a socket's read
        pipeline().fireChannelRead(buf);
    }

    /** Reading resumed: what waited is read in the loop's next turn, not inside the call that resumed it. */
    private void readUnread() {
        unreadScheduled = false;
        if (!open || !config.isAutoRead() || unread.isEmpty()) {
            return;
        }
        for (byte[] bytes; config.isAutoRead() && (bytes = unread.poll()) != null; ) {
            read(bytes);
        }
        pipeline().fireChannelReadComplete();
    }

    // ---- the channel --------------------------------------------------------------------------------------------

    @Override
    public ChannelConfig config() {
        return config;
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    @Override
    public boolean isActive() {
        return open && active;
    }

    @Override
    public ChannelMetadata metadata() {
        return METADATA;
    }

    @Override
    protected AbstractUnsafe newUnsafe() {
        return new AbstractUnsafe() {
            @Override
            public void connect(SocketAddress remoteAddress, SocketAddress localAddress, ChannelPromise promise) {
                if (promise.setUncancellable()) {
                    promise.trySuccess(); // connected from the start: the peer is already there
                }
            }
        };
    }

    @Override
    protected boolean isCompatible(EventLoop loop) {
        return true; // registered on the ScriptedLoop's embedded loop, whose class Netty keeps package-private
    }

    @Override
    protected SocketAddress localAddress0() {
        return local;
    }

    @Override
    protected SocketAddress remoteAddress0() {
        return remote;
    }

    @Override
    protected void doRegister() {
        active = activeOnRegister;
    }

    @Override
    protected void doBind(SocketAddress localAddress) {
    }

    @Override
    protected void doDisconnect() {
        doClose();
    }

    @Override
    protected void doClose() {
        open = false;
        active = false;
        unread.clear();
    }

    @Override
    protected void doBeginRead() {
        if (!unread.isEmpty() && !unreadScheduled) {
            unreadScheduled = true;
            eventLoop().execute(this::readUnread);
        }
    }

    @Override
    protected void doWrite(ChannelOutboundBuffer in) {
        StackTraceElement[] stack = new Throwable().getStackTrace();
        boolean recorded = false;
        for (Object msg; (msg = in.current()) != null; ) {
            if (msg instanceof ByteBuf buf && buf.isReadable()) {
                if (!recorded) {
                    writes.add(new Write(written.size(), stack));
                    recorded = true;
                }
                byte[] bytes = new byte[buf.readableBytes()];
                buf.getBytes(buf.readerIndex(), bytes);
                written.writeBytes(bytes);
            } else if (!(msg instanceof ByteBuf)) {
                in.remove(new IllegalStateException("wrote " + msg.getClass().getName() + " (expected: ByteBuf)"));
                continue;
            }
            in.remove(); // releases the buffer, as a socket does once it is written
        }
    }
}
