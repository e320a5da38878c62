package io.sluice.replay;

import io.sluice.capture.CaptureKey;
import io.sluice.capture.CaptureReader;
import io.sluice.capture.CaptureRecord;
import io.sluice.protocol.Command;
import io.sluice.sql.SqlDigest;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The statements of a capture as the query rules see them (issue #41 item 3): each COM_QUERY, COM_STMT_PREPARE and
 * COM_STMT_EXECUTE with its session's user and schema at that moment, and its digest; an execution by the SQL its
 * statement was prepared with, as the rules decide it. A command captured only in part is skipped and counted: its
 * digest would be that of its start.
 */
final class CapturedStatements {

    /** One statement of the capture. */
    interface Visitor {
        /**
         * @param user the session's user
         * @param schema its default schema, or {@code null}
         * @param command the command byte
         * @param digest the statement's digest
         */
        void statement(String user, String schema, int command, SqlDigest digest);
    }

    /** What a walk went through. */
    record Walk(long sessions, long statements, long skipped) {
    }

    private CapturedStatements() {
    }

    /** Gives {@code visitor} every statement of the capture in {@code dir} ({@code key}: {@code null} if plain). */
    static Walk walk(Path dir, CaptureKey key, Visitor visitor) throws IOException {
        Map<Integer, String> users = new HashMap<>();
        Map<Integer, String> schemas = new HashMap<>();
        /** Session id and server statement id to the statement's digest. */
        Map<Long, SqlDigest> prepared = new HashMap<>();
        long sessions = 0;
        long statements = 0;
        long skipped = 0;
        try (CaptureReader reader = CaptureReader.open(dir, key)) {
            for (CaptureRecord record = reader.next(); record != null; record = reader.next()) {
                int session = record.sessionId();
                if (record instanceof CaptureRecord.SessionBegin begin) {
                    sessions++;
                    users.put(session, begin.user());
                    schemas.put(session, begin.schema());
                } else if (record instanceof CaptureRecord.ChangeUser change) {
                    users.put(session, change.user());
                    schemas.put(session, change.schema());
                } else if (record instanceof CaptureRecord.SessionEnd) {
                    users.remove(session);
                    schemas.remove(session);
                } else if (record instanceof CaptureRecord.CommandRecord command) {
                    String user = users.get(session);
                    String schema = schemas.get(session);
                    int code = command.command();
                    byte[] payload = command.payload();
                    if (code == Command.COM_INIT_DB && command.outcome() == CaptureRecord.Outcome.OK) {
                        schemas.put(session, new String(payload, StandardCharsets.UTF_8));
                    } else if (code == Command.COM_QUERY || code == Command.COM_STMT_PREPARE) {
                        if (command.truncated()) {
                            skipped++;
                            continue;
                        }
                        String sql = new String(payload, StandardCharsets.UTF_8);
                        SqlDigest digest = SqlDigest.of(sql);
                        statements++;
                        visitor.statement(user, schema, code, digest);
                        if (code == Command.COM_STMT_PREPARE && command.outcome() == CaptureRecord.Outcome.OK) {
                            prepared.put(statementKey(session, command.statementId()), digest);
                        } else if (code == Command.COM_QUERY && command.outcome() == CaptureRecord.Outcome.OK) {
                            String use = schemaOfUse(digest.text());
                            if (use != null) {
                                schemas.put(session, use);
                            }
                        }
                    } else if (code == Command.COM_STMT_EXECUTE && payload.length >= 4) {
                        long id = ByteBuffer.wrap(payload, 0, 4).order(ByteOrder.LITTLE_ENDIAN).getInt() & 0xFFFFFFFFL;
                        SqlDigest digest = prepared.get(statementKey(session, id));
                        if (digest == null) {
                            skipped++; // prepared before the capture started
                        } else {
                            statements++;
                            visitor.statement(user, schema, code, digest);
                        }
                    }
                }
            }
        }
        return new Walk(sessions, statements, skipped);
    }

    private static long statementKey(int session, long statementId) {
        return ((long) session << 32) | (statementId & 0xFFFFFFFFL);
    }

    /** The schema a {@code USE name} statement's digest text names, or {@code null}: another statement. */
    private static String schemaOfUse(String digestText) {
        String text = digestText.strip();
        if (text.length() < 5 || !text.substring(0, 4).toLowerCase(Locale.ROOT).equals("use ")) {
            return null;
        }
        String name = text.substring(4).strip();
        if (name.endsWith(";")) {
            name = name.substring(0, name.length() - 1).strip();
        }
        if (name.length() > 1 && name.startsWith("`") && name.endsWith("`")) {
            name = name.substring(1, name.length() - 1).replace("``", "`");
        }
        return name.isEmpty() || name.contains(" ") ? null : name;
    }
}
