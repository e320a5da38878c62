package io.sluice.backend;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.config.JdbcUrl;
import io.sluice.protocol.HandshakeV10;
import io.sluice.protocol.Packets;
import io.sluice.protocol.ProtocolException;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;

/**
 * Reads a backend's greeting over a plain blocking socket, once at start: the server version and capabilities that
 * Sluice then presents to its clients. It runs before any event loop exists, so a blocking socket is the simplest
 * correct tool.
 */
public final class BackendProbe {

    private BackendProbe() {
    }

    /**
     * Connects, reads the greeting and hangs up.
     *
     * @throws IOException when the server cannot be reached or does not greet as MySQL does
     */
    public static BackendServerInfo probe(JdbcUrl url, int timeoutMillis) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(url.host(), url.port()), timeoutMillis);
            socket.setSoTimeout(timeoutMillis);
            DataInputStream in = new DataInputStream(socket.getInputStream());
            byte[] header = new byte[Packets.HEADER_SIZE];
            in.readFully(header);
            int length = (header[0] & 0xFF) | (header[1] & 0xFF) << 8 | (header[2] & 0xFF) << 16;
            byte[] payload = new byte[length];
            in.readFully(payload);
            ByteBuf buf = Unpooled.wrappedBuffer(payload);
            if (Packets.isErr(buf)) {
                throw new IOException("the server refused the connection: " + Packets.parseErr(buf));
            }
            if (length == 0 || payload[0] != 10) {
                throw new IOException("the server did not send a protocol 10 greeting");
            }
            try {
                HandshakeV10 greeting = HandshakeV10.parse(buf);
                return new BackendServerInfo(greeting.serverVersion(), greeting.capabilities(),
                        greeting.collationId(), greeting.mariaDbCapabilities());
            } catch (ProtocolException e) {
                throw new IOException("the server's greeting could not be read: " + e.getMessage(), e);
            }
        }
    }
}
