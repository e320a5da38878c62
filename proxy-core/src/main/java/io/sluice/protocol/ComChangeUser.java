package io.sluice.protocol;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;

/**
 * COM_CHANGE_USER: the client re-authenticates on an open connection. Sluice checks it against its own users and
 * resets the backend connection, which stays authenticated as the data source's account.
 *
 * @param user the new user
 * @param authResponse the scrambled password, computed over the greeting's nonce
 * @param database the schema to use, or {@code null}
 * @param collationId the new character set, or -1 when the client sent none
 * @param authPluginName the plugin of {@code authResponse}, or {@code null}
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_change_user.html">COM_CHANGE_USER</a>
 */
public record ComChangeUser(String user, byte[] authResponse, String database, int collationId,
        String authPluginName) {

    /** Parses the payload, command byte included (borrowed, not released). */
    public static ComChangeUser parse(ByteBuf payload, int capabilities) {
        ByteBuf in = payload.duplicate();
        try {
            in.skipBytes(1);
            String user = readNul(in);
            byte[] auth;
            if (Capabilities.has(capabilities, Capabilities.CLIENT_SECURE_CONNECTION)) {
                auth = new byte[in.readUnsignedByte()];
                in.readBytes(auth);
            } else {
                auth = readNul(in).getBytes(StandardCharsets.UTF_8);
            }
            String database = readNul(in);
            int collation = -1;
            String plugin = null;
            if (in.readableBytes() >= 2) {
                collation = in.readUnsignedShortLE();
                if (in.isReadable() && Capabilities.has(capabilities, Capabilities.CLIENT_PLUGIN_AUTH)) {
                    plugin = readNul(in);
                }
            }
            return new ComChangeUser(user, auth, database.isEmpty() ? null : database, collation,
                    plugin == null || plugin.isEmpty() ? null : plugin);
        } catch (IndexOutOfBoundsException e) {
            throw new ProtocolException("COM_CHANGE_USER: truncated (expected: user, auth response, schema)");
        }
    }

    private static String readNul(ByteBuf in) {
        int end = in.indexOf(in.readerIndex(), in.writerIndex(), (byte) 0);
        if (end < 0) {
            // the last field may run to the end of the packet without its NUL
            String value = in.toString(StandardCharsets.UTF_8);
            in.skipBytes(in.readableBytes());
            return value;
        }
        String value = in.toString(in.readerIndex(), end - in.readerIndex(), StandardCharsets.UTF_8);
        in.readerIndex(end + 1);
        return value;
    }
}
