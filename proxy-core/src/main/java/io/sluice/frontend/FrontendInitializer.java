package io.sluice.frontend;

import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.timeout.IdleStateHandler;
import io.sluice.codec.PacketFrameDecoder;
import io.sluice.config.ProxyProtocol;
import io.sluice.metrics.RateLimitedWarning;
import io.sluice.tls.SslRequestHandler;
import java.util.concurrent.TimeUnit;

/**
 * The client pipeline: frames, then the login, which replaces itself with the command relay; one job each. Three
 * more handlers only where configured: the PROXY protocol header check ({@code server.proxyProtocol}, gone after the
 * first bytes), the SSLRequest check while TLS is on (gone after the first packet) and the idle check when
 * {@code server.idleTimeoutMilliseconds} is set. Nothing in it needs a socket, so it takes any channel:
 * tests put the same pipeline on an in-memory one ({@code ScriptedClient}).
 */
public final class FrontendInitializer extends ChannelInitializer<Channel> {
    private final FrontendContext context;
    private final ClientSecurity security;
    private final ProxyProtocol proxyProtocol;
    private final RateLimitedWarning untrustedProxyHeaders = ProxyProtocolHandler.untrustedWarning();

    /**
     * @throws io.sluice.config.ConfigException when the TLS certificates cannot be read or generated
     */
    public FrontendInitializer(FrontendContext context) {
        this.context = context;
        this.security = new ClientSecurity(context.config().server());
        this.proxyProtocol = context.config().server().proxyProtocol();
    }

    @Override
    protected void initChannel(Channel ch) {
        ChannelPipeline pipeline = ch.pipeline();
        if (proxyProtocol.enabled()) {
            // first: a load balancer's header comes before anything else, TLS included
            pipeline.addLast("proxyProtocol", new ProxyProtocolHandler(proxyProtocol, untrustedProxyHeaders));
        }
        if (security.tls() != null) {
            pipeline.addLast("sslRequest", new SslRequestHandler(security.tls()));
        }
        if (security.idleTimeoutMillis() > 0) {
            // Reader idleness only: a writer or all-idle check would add a listener to every write.
            pipeline.addLast("idle", new IdleStateHandler(security.idleTimeoutMillis(), 0, 0, TimeUnit.MILLISECONDS));
        }
        // Until the client is authenticated its packets are held to the login's limit; the login raises it.
        int loginLimit = ClientHandshakeHandler.loginPacketLimit(context.config().server().maxPacketSize());
        pipeline.addLast("frames", new PacketFrameDecoder(loginLimit, ClientHandshakeHandler.LOGIN_LIMIT))
                .addLast("login", new ClientHandshakeHandler(context, security));
    }
}
