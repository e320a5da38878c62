package io.sluice.scripted;

import io.sluice.testing.MySqlWire;
import io.sluice.testing.ScriptedSluice;
import java.util.Arrays;
import java.util.Random;

/**
 * Command-phase frames a hostile or broken client may send after logging in, from the test's seeded random: any
 * command byte with any payload; prepared-statement commands (COM_STMT_EXECUTE, SEND_LONG_DATA, CLOSE, RESET, FETCH)
 * with statement ids the session never prepared, parameter counts and types that lie, cut at any byte;
 * COM_CHANGE_USER garbage; empty packets; headers that announce more than arrives; and well-formed commands, so that
 * a case mixes both and pipelines them.
 */
final class CommandMutations {
    private static final int COM_STMT_SEND_LONG_DATA = 0x18;
    private static final String[] QUERIES = {"SELECT 1", "BEGIN", "COMMIT", "ROLLBACK", "SET @a = 1",
        "SELECT GET_LOCK('x', 0)", "LOCK TABLES t WRITE", "PREPARE s FROM 'SELECT 1'", "USE app", ""};

    private final Random random;

    CommandMutations(Random random) {
        this.random = random;
    }

    /** One to six frames, each well-formed or damaged, as one byte stream. */
    byte[] frames() {
        int n = 1 + random.nextInt(6);
        byte[][] frames = new byte[n][];
        for (int i = 0; i < n; i++) {
            frames[i] = frame();
        }
        return MySqlWire.concat(frames);
    }

    private byte[] frame() {
        switch (random.nextInt(14)) {
            case 0:
                return framed(MySqlWire.command(random.nextInt(256), garbage(40)));
            case 1:
                return framed(stmtExecute());
            case 2:
                return framed(statementCommand(COM_STMT_SEND_LONG_DATA, 2, garbage(30)));
            case 3:
                return framed(statementCommand(MySqlWire.COM_STMT_CLOSE, 0, new byte[0]));
            case 4:
                return framed(statementCommand(MySqlWire.COM_STMT_RESET, 0, new byte[0]));
            case 5:
                return framed(statementCommand(MySqlWire.COM_STMT_FETCH, 4, new byte[0]));
            case 6:
                return framed(changeUser());
            case 7:
                return framed(MySqlWire.comStmtPrepare(random.nextBoolean() ? "SELECT ?" : "SELECT ?, ?"));
            case 8:
                return framed(MySqlWire.comQuery(QUERIES[random.nextInt(QUERIES.length)]));
            case 9: { // a header that announces more than follows (or the most a frame can hold)
                byte[] frame = framed(MySqlWire.comQuery("SELECT 1"));
                int claimed = random.nextBoolean() ? frame.length + random.nextInt(64) : MySqlWire.MAX_PAYLOAD;
                frame[0] = (byte) claimed;
                frame[1] = (byte) (claimed >>> 8);
                frame[2] = (byte) (claimed >>> 16);
                return frame;
            }
            case 10:
                return MySqlWire.frame(0, new byte[0]);
            case 11: {
                int[] simple = {MySqlWire.COM_PING, MySqlWire.COM_INIT_DB, MySqlWire.COM_RESET_CONNECTION,
                    MySqlWire.COM_SET_OPTION, MySqlWire.COM_FIELD_LIST, MySqlWire.COM_STATISTICS,
                    MySqlWire.COM_BINLOG_DUMP, MySqlWire.COM_QUIT};
                return framed(MySqlWire.command(simple[random.nextInt(simple.length)], garbage(8)));
            }
            case 12: { // a well-formed command cut short, its header telling the truth
                byte[] payload = random.nextBoolean() ? stmtExecute() : MySqlWire.comStmtExecute(1, 0);
                return framed(Arrays.copyOf(payload, 1 + random.nextInt(payload.length)));
            }
            default:
                return garbage(12);
        }
    }

    /** Sequence id 0 as a client sends a command, now and then another. */
    private byte[] framed(byte[] payload) {
        return MySqlWire.frame(random.nextInt(10) == 0 ? random.nextInt(256) : 0, payload);
    }

    /**
     * COM_STMT_EXECUTE: a statement id the session may or may not have, flags, iteration count, then a NULL bitmap,
     * new-params-bound flag, types and values for a parameter count the statement may not have.
     */
    private byte[] stmtExecute() {
        MySqlWire.Payload p = MySqlWire.payload().int1(MySqlWire.COM_STMT_EXECUTE).int4(statementId())
                .int1(random.nextInt(10) == 0 ? random.nextInt(256) : random.nextInt(2))
                .int4(random.nextInt(10) == 0 ? random.nextInt() : 1);
        int params = random.nextInt(4);
        p.bytes(new byte[(params + 7) / 8]).int1(random.nextInt(3));
        for (int i = 0; i < params; i++) {
            p.int1(random.nextBoolean() ? MySqlWire.MYSQL_TYPE_LONG : random.nextInt(256)).int1(random.nextInt(2));
        }
        p.bytes(garbage(16));
        return p.toBytes();
    }

    private byte[] statementCommand(int command, int extra, byte[] tail) {
        byte[] payload = MySqlWire.payload().int1(command).int4(statementId()).bytes(garbage(extra)).bytes(tail)
                .toBytes();
        return random.nextInt(4) == 0 ? Arrays.copyOf(payload, 1 + random.nextInt(payload.length)) : payload;
    }

    /** The ids a session may have (1, 2, ...), 0, or any. */
    private int statementId() {
        switch (random.nextInt(3)) {
            case 0:
                return 1 + random.nextInt(4);
            case 1:
                return random.nextInt();
            default:
                return 0;
        }
    }

    /** COM_CHANGE_USER: garbage, or the scripted user's (or another's) well-formed request damaged. */
    private byte[] changeUser() {
        if (random.nextInt(3) == 0) {
            return MySqlWire.command(MySqlWire.COM_CHANGE_USER, garbage(60));
        }
        byte[] payload = MySqlWire.payload().int1(MySqlWire.COM_CHANGE_USER)
                .strNul(random.nextInt(4) == 0 ? "nobody" : ScriptedSluice.USER).int1(0).strNul("")
                .int2(MySqlWire.UTF8MB4_GENERAL_CI).strNul("mysql_native_password").toBytes();
        switch (random.nextInt(3)) {
            case 0:
                return payload;
            case 1:
                return Arrays.copyOf(payload, 1 + random.nextInt(payload.length));
            default:
                payload[1 + random.nextInt(payload.length - 1)] = (byte) random.nextInt(256);
                return payload;
        }
    }

    private byte[] garbage(int max) {
        byte[] bytes = new byte[random.nextInt(max + 1)];
        random.nextBytes(bytes);
        return bytes;
    }
}
