package io.sluice.protocol;

import io.netty.buffer.ByteBuf;

/**
 * Error codes a server sends that Sluice acts on. Sluice relays them as they come and never sends them itself (those
 * are {@link ErrorCode}).
 *
 * @see <a href="https://mariadb.com/kb/en/mariadb-error-code-reference/">MariaDB error codes</a>
 */
public final class ServerErrors {
    /** "Unknown database": a schema a login had found is gone. */
    public static final int ER_BAD_DB_ERROR = 1049;
    /** "Table doesn't exist": MySQL has no {@code mysql.global_priv}, so its accounts are read from mysql.user. */
    public static final int ER_NO_SUCH_TABLE = 1146;
    /** MariaDB's "Connection was killed", sent to a connection killed while it waited for a command. */
    public static final int ER_CONNECTION_KILLED = 1927;

    private ServerErrors() {
    }

    /**
     * Whether {@code buf} is exactly one whole ERR packet, 1792 (the session's READ ONLY refused a write) or 1290
     * (the server's {@code read_only} did): the whole response of a statement the server refused before it did
     * anything.
     */
    public static boolean isWriteRefusal(ByteBuf buf) {
        int at = buf.readerIndex();
        int readable = buf.readableBytes();
        if (readable < Packets.HEADER_SIZE + 3 || Packets.payloadLength(buf, at) + Packets.HEADER_SIZE != readable
                || buf.getUnsignedByte(at + Packets.HEADER_SIZE) != 0xFF) {
            return false;
        }
        int code = buf.getUnsignedShortLE(at + Packets.HEADER_SIZE + 1);
        return code == ErrorCode.ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION.code()
                || code == ErrorCode.ER_OPTION_PREVENTS_STATEMENT.code();
    }
}
