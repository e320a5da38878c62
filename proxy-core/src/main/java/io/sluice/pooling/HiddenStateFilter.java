package io.sluice.pooling;

import io.netty.buffer.ByteBuf;
import io.sluice.readwrite.StatementClassifier;
import io.sluice.sql.Keyword;
import io.sluice.sql.SqlLexer;
import io.sluice.sql.SqlLexer.Kind;

/**
 * Session pooling's look before the scan: whether a statement may leave state that only the {@code StatementScan}
 * tells (decision 108), found by a byte search and the first word, so that the scan runs only on the few that may.
 * Session pooling follows nothing else: everything else a session does stays on its own connection.
 */
final class HiddenStateFilter {

    private HiddenStateFilter() {
    }

    /**
     * Whether the SQL text in {@code buf} between {@code from} and {@code to} may call a lock function ({@code GET_LOCK},
     * {@code RELEASE_LOCK}, {@code RELEASE_ALL_LOCKS}): it has {@code _LOCK} somewhere, in any case. One byte search
     * over a statement that has no underscore, which most have not.
     */
    static boolean mayCallLockFunction(ByteBuf buf, int from, int to) {
        for (int i = buf.indexOf(from, to, (byte) '_'); i >= 0 && i + 4 < to; i = buf.indexOf(i + 1, to, (byte) '_')) {
            if ((buf.getByte(i + 1) | 0x20) == 'l' && (buf.getByte(i + 2) | 0x20) == 'o'
                    && (buf.getByte(i + 3) | 0x20) == 'c' && (buf.getByte(i + 4) | 0x20) == 'k') {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether the SQL text may leave state on its connection that only the scan tells: it may call a lock function
     * ({@link #mayCallLockFunction}), or its first word starts a statement that runs code its text does not show
     * (CALL, EXECUTE, BINLOG), HANDLER, SET (SET ROLE), or BACKUP (a lock no reset releases).
     */
    static boolean mayLeaveHiddenState(ByteBuf buf, int from, int to) {
        if (mayCallLockFunction(buf, from, to)) {
            return true;
        }
        int start = SqlLexer.skipToCode(StatementClassifier.BYTES, buf, from, to);
        if (start >= to) {
            return false;
        }
        long token = SqlLexer.next(StatementClassifier.BYTES, buf, start, to);
        if (SqlLexer.kind(token) != Kind.WORD) {
            return false;
        }
        int end = SqlLexer.end(token);
        Keyword first = Keyword.of(StatementClassifier.BYTES, buf, start, end);
        return first == Keyword.CALL || first == Keyword.EXECUTE || first == Keyword.BINLOG
                || first == Keyword.HANDLER || first == Keyword.SET
                || first == null && SqlLexer.is(StatementClassifier.BYTES, buf, start, end, "BACKUP");
    }
}
