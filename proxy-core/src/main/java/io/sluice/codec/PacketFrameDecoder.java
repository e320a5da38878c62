package io.sluice.codec;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Splits a client's byte stream into MySQL frames: each output is a retained slice of one whole frame, header
 * included, so the session can forward it without copying. Frames of a logical packet of 16 MiB or more come out
 * one by one; the decoder only adds up their length and refuses a packet larger than {@code maxPacketSize} as soon as
 * a header announces it, before its body is buffered.
 *
 * <p>A read that holds exactly one whole frame, with nothing buffered before it, is passed on as it is, without a
 * slice: that is the common case (a client sends one command and waits for its answer), and it saves the slice, a
 * retain/release pair and the decoder's bookkeeping per command.
 *
 * <p>With a read timeout set ({@link #readTimeout}), a frame begun must be complete within it: otherwise a
 * {@link NetReadTimeoutException} goes down the pipeline. The timer exists only while a frame is incomplete and is
 * armed once per timeout period, not per read, so a read of whole frames never touches it or the clock.
 *
 * <p>Ownership: each emitted buffer (a slice, or the read itself) belongs to the next handler, which must release it
 * or pass it on.
 */
public final class PacketFrameDecoder extends ByteToMessageDecoder {
    private final FrameReader frames;
    /** True while a whole-frame read is being passed on. */
    private boolean passingOn;
    /** How long a frame begun may take to arrive whole; 0: no limit. */
    private long readTimeoutMillis;
    /** Armed while a frame is incomplete; {@code null} otherwise. */
    private ScheduledFuture<?> readTimer;
    /** Frames cut out so far, and when the timer was armed: a frame finished in between restarts the count. */
    private long framesDecoded;
    private long framesDecodedAtArm;

    public PacketFrameDecoder(int maxPacketSize) {
        this.frames = new FrameReader(maxPacketSize);
    }

    /** @param limitName what sets {@code maxPacketSize}, named in the error */
    public PacketFrameDecoder(int maxPacketSize, String limitName) {
        this(maxPacketSize);
        frames.limit(maxPacketSize, limitName);
    }

    /**
     * Sets how long a frame begun may take to arrive whole before the client is disconnected (MySQL's
     * {@code net_read_timeout}); 0 for no limit. Set at login: before it, the handshake timeout bounds everything.
     */
    public void readTimeout(long millis) {
        this.readTimeoutMillis = millis;
    }

    /** Changes the largest packet accepted from the next header on ({@link FrameReader#limit}). */
    public void limit(int maxPacketSize, String limitName) {
        frames.limit(maxPacketSize, limitName);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (!passingOn && msg instanceof ByteBuf in && frames.isOneWholeFrame(in) && !internalBuffer().isReadable()) {
            // A read that arrives while this one is passed on (only a transport that reads synchronously in read()
            // does that) takes the decoder's own path. So does any read while bytes are buffered: frames stay in
            // order. One difference from the decoder's path: when a later read in the same batch leaves a partial
            // frame and reading is paused, the decoder asks for one more read at the batch's end, because it did not
            // see this frame go by. That read brings in at most one more buffer, which the decoder holds as usual.
            passingOn = true;
            try {
                ctx.fireChannelRead(in);
            } finally {
                passingOn = false;
            }
            return;
        }
        super.channelRead(ctx, msg);
        if (readTimeoutMillis > 0 && readTimer == null && internalBuffer().isReadable()) {
            armReadTimer(ctx); // a frame is incomplete
        }
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        for (ByteBuf frame; (frame = frames.next(in)) != null; ) {
            framesDecoded++;
            out.add(frame);
        }
    }

    private void armReadTimer(ChannelHandlerContext ctx) {
        framesDecodedAtArm = framesDecoded;
        readTimer = ctx.executor().schedule(() -> onReadTimer(ctx), readTimeoutMillis, TimeUnit.MILLISECONDS);
    }

    private void onReadTimer(ChannelHandlerContext ctx) {
        readTimer = null;
        if (!ctx.channel().isActive() || !internalBuffer().isReadable()) {
            return; // nothing incomplete any more
        }
        if (framesDecoded != framesDecodedAtArm || !ctx.channel().config().isAutoRead()) {
            // Another frame is incomplete now, or Sluice itself stopped reading (the backend is full, a connection
            // is awaited): not the client's doing. The frame gets another period.
            armReadTimer(ctx);
            return;
        }
        ctx.fireExceptionCaught(new NetReadTimeoutException(readTimeoutMillis));
    }

    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) {
        cancelReadTimer();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        cancelReadTimer();
        super.channelInactive(ctx);
    }

    private void cancelReadTimer() {
        if (readTimer != null) {
            readTimer.cancel(false);
            readTimer = null;
        }
    }
}
