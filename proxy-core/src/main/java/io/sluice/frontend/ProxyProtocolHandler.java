package io.sluice.frontend;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.ProtocolDetectionResult;
import io.netty.handler.codec.haproxy.HAProxyCommand;
import io.netty.handler.codec.haproxy.HAProxyMessage;
import io.netty.handler.codec.haproxy.HAProxyMessageDecoder;
import io.netty.handler.codec.haproxy.HAProxyProtocolVersion;
import io.netty.util.NetUtil;
import io.sluice.config.ProxyProtocol;
import io.sluice.metrics.RateLimitedWarning;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * First in a client pipeline when PROXY protocol is on ({@code server.proxyProtocol}): looks at a connection's first
 * bytes, once. A PROXY header (v1 or v2) from a trusted network is decoded by Netty's {@link HAProxyMessageDecoder}
 * and the client it names becomes the session's address ({@link ProxiedClient}); a header from any other address
 * closes the connection, since anyone could forge one; anything else is a MySQL client talking to Sluice directly,
 * and its bytes go on as they came. Sluice has sent its greeting by then: a load balancer sends the header as soon as
 * it connects, before the client's first packet.
 */
final class ProxyProtocolHandler extends ByteToMessageDecoder {
    private static final Logger log = LoggerFactory.getLogger(ProxyProtocolHandler.class);

    private final ProxyProtocol config;
    private final RateLimitedWarning untrusted;

    ProxyProtocolHandler(ProxyProtocol config, RateLimitedWarning untrusted) {
        this.config = config;
        this.untrusted = untrusted;
    }

    /** The warning for headers from untrusted addresses, shared by a listener's connections. */
    static RateLimitedWarning untrustedWarning() {
        return new RateLimitedWarning(log);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        ProtocolDetectionResult<HAProxyProtocolVersion> detected = HAProxyMessageDecoder.detectProtocol(in);
        switch (detected.state()) {
            case NEEDS_MORE_DATA:
                return;
            case INVALID:
                ctx.pipeline().remove(this); // a direct client: the bytes read so far go on to the frame decoder
                return;
            default:
                InetAddress peer = ctx.channel().remoteAddress() instanceof InetSocketAddress isa
                        ? isa.getAddress() : null;
                if (peer == null || !config.trusts(peer)) {
                    untrusted.warn("client {}: PROXY protocol header from an address outside "
                            + "server.proxyProtocol.trustedNetworks: closing", ctx.channel().remoteAddress());
                    in.skipBytes(in.readableBytes());
                    ctx.close();
                    return;
                }
                ctx.pipeline().addAfter(ctx.name(), "proxyHeader", new HAProxyMessageDecoder())
                        .addAfter("proxyHeader", "proxiedClient", new ProxiedClient());
                ctx.pipeline().remove(this); // the header's bytes go on to the decoder just added
        }
    }

    /** The address a PROXY header named, told to the login stage as a user event. */
    record ProxiedAddress(InetSocketAddress address) {
    }

    /**
     * Takes the one {@link HAProxyMessage} and tells the session whom it names; a LOCAL command (the load balancer's
     * own health check) names nobody, and the socket's address stands.
     */
    static final class ProxiedClient extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (!(msg instanceof HAProxyMessage header)) {
                ctx.fireChannelRead(msg);
                return;
            }
            try {
                if (header.command() == HAProxyCommand.PROXY && header.sourceAddress() != null) {
                    InetAddress source = NetUtil.createInetAddressFromIpAddressString(header.sourceAddress());
                    if (source != null) {
                        ctx.fireUserEventTriggered(new ProxiedAddress(
                                new InetSocketAddress(source, header.sourcePort())));
                    }
                }
            } finally {
                header.release();
                ctx.pipeline().remove(this);
            }
        }
    }
}
