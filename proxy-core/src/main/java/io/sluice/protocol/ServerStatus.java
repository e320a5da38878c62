package io.sluice.protocol;

import org.apache.shardingsphere.db.protocol.mysql.constant.MySQLStatusFlag;

/**
 * Server status flags carried by OK and EOF packets.
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/mysql__com_8h.html">mysql_com.h</a>
 */
public final class ServerStatus {
    public static final int SERVER_STATUS_IN_TRANS = MySQLStatusFlag.SERVER_STATUS_IN_TRANS.getValue();
    public static final int SERVER_STATUS_AUTOCOMMIT = MySQLStatusFlag.SERVER_STATUS_AUTOCOMMIT.getValue();
    public static final int SERVER_MORE_RESULTS_EXISTS = MySQLStatusFlag.SERVER_MORE_RESULTS_EXISTS.getValue();
    public static final int SERVER_STATUS_CURSOR_EXISTS = MySQLStatusFlag.SERVER_STATUS_CURSOR_EXISTS.getValue();
    /** The OK packet carries session state information (CLIENT_SESSION_TRACK): trackers reported a change. */
    public static final int SERVER_SESSION_STATE_CHANGED = 0x4000;
    public static final int SERVER_STATUS_LAST_ROW_SENT = MySQLStatusFlag.SERVER_STATUS_LAST_ROW_SENT.getValue();

    private ServerStatus() {
    }
}
