package io.sluice.frontend;

import io.netty.channel.ChannelInitializer;
import io.netty.channel.socket.SocketChannel;
import io.sluice.codec.PacketFrameDecoder;

/** The client pipeline: frames, then the session. Two handlers, one job each. */
public final class FrontendInitializer extends ChannelInitializer<SocketChannel> {
    private final FrontendContext context;

    public FrontendInitializer(FrontendContext context) {
        this.context = context;
    }

    @Override
    protected void initChannel(SocketChannel ch) {
        ch.pipeline()
                .addLast("frames", new PacketFrameDecoder(context.config().server().maxPacketSize()))
                .addLast("session", new FrontendSession(context));
    }
}
