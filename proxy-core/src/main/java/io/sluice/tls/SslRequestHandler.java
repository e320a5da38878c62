package io.sluice.tls;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.sluice.protocol.Capabilities;
import io.sluice.protocol.HandshakeResponse41;
import io.sluice.protocol.Packets;
import java.util.List;

/**
 * The first handler of a client pipeline while TLS is on, for the client's first packet only. An SSLRequest (a
 * 32-byte HandshakeResponse41 prefix with CLIENT_SSL) is consumed and this handler replaces itself with an
 * {@link io.netty.handler.ssl.SslHandler}; anything else passes on untouched and the handler removes itself. Either
 * way it is gone after the first packet, so the command phase never passes through it.
 *
 * <p>A client sends its TLS ClientHello right behind the SSLRequest without waiting, so both may arrive in one read:
 * the bytes after the SSLRequest stay in this decoder's buffer, which {@link ByteToMessageDecoder} hands to the
 * handler that takes its place, the SslHandler.
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_connection_phase_packets_protocol_ssl_request.html">Protocol::SSLRequest</a>
 */
public final class SslRequestHandler extends ByteToMessageDecoder {
    private static final int SSL_REQUEST_FRAME = Packets.HEADER_SIZE + HandshakeResponse41.SSL_REQUEST_LENGTH;

    private final ServerTls tls;

    public SslRequestHandler(ServerTls tls) {
        this.tls = tls;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (in.readableBytes() < Packets.HEADER_SIZE) {
            return;
        }
        int start = in.readerIndex();
        if (Packets.payloadLength(in, start) != HandshakeResponse41.SSL_REQUEST_LENGTH) {
            ctx.pipeline().remove(this); // a plain handshake response: the buffered bytes go on to the frames
            return;
        }
        if (in.readableBytes() < SSL_REQUEST_FRAME) {
            return; // <header> <here: the 32 bytes have not all arrived>
        }
        int capabilities = in.getIntLE(start + Packets.HEADER_SIZE);
        if (!Capabilities.has(capabilities, Capabilities.CLIENT_SSL)) {
            ctx.pipeline().remove(this); // 32 bytes but no CLIENT_SSL: the session refuses it as a bad handshake
            return;
        }
        in.skipBytes(SSL_REQUEST_FRAME);
        // Whatever followed the SSLRequest (the ClientHello) is forwarded to the SslHandler when this one goes.
        ctx.pipeline().replace(this, "tls", tls.newHandler(ctx.alloc()));
    }
}
