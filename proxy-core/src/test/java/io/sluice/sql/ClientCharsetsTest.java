package io.sluice.sql;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.Charset;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Decision 204: in a client character set whose characters may end in an ASCII byte, a statement that is not all
 * ASCII is code the text does not show; the SET statements that change the set are read for which set they name.
 */
class ClientCharsetsTest {

    /** {@code sql} in {@code charset}, as the scan reads a packet: one unsigned byte per code unit. */
    private static StatementScan scan(boolean asciiTrails, String sql, Charset charset) {
        byte[] bytes = sql.getBytes(charset);
        return new StatementScan(() -> HiddenCodeNames.NONE, () -> asciiTrails ? UnreadText.NON_ASCII : 0).scan(bytes);
    }

    @Test
    void aLockAfterALiteralEndingInABackslashByteIsHiddenCodeInSjis() {
        // 予 is 0x97 0x5C in sjis: read byte by byte, the literal's quote is escaped and GET_LOCK is string
        String sql = "SELECT '予', GET_LOCK('k', 0), LAST_INSERT_ID()";
        StatementScan read = scan(true, sql, Charset.forName("SJIS"));
        assertThat(read.effects() & SessionEffects.STORED_CODE).isNotZero();
        assertThat(read.effects() & (SessionEffects.CALLS_LAST_INSERT_ID | SessionEffects.PREVIOUS_VALUES))
                .as("no rewrite of a text not read").isZero();
        assertThat(read.routeFacts() & RouteFacts.SIDE_EFFECT).as("to the primary").isNotZero();
        assertThat(read.placeholders()).isEqualTo(-1);
    }

    @Test
    void aStatementAllAsciiIsReadAsInAnySet() {
        StatementScan read = scan(true, "SELECT 'a', LAST_INSERT_ID()", Charset.forName("SJIS"));
        assertThat(read.effects() & SessionEffects.STORED_CODE).isZero();
        assertThat(read.effects() & SessionEffects.CALLS_LAST_INSERT_ID).isNotZero();
        assertThat(read.routeFacts() & RouteFacts.SIDE_EFFECT).isZero();
    }

    @Test
    void utf8TextIsReadAsBefore() {
        StatementScan read = scan(false, "SELECT '予', GET_LOCK('k', 0)", Charset.forName("UTF-8"));
        assertThat(read.effects() & SessionEffects.GET_LOCK).isNotZero();
        assertThat(read.effects() & SessionEffects.STORED_CODE).isZero();
    }

    @Test
    void aMultiStatementThatSetsSuchASetReadsNoFurther() {
        // the server reads the SELECT after SET NAMES sjis ran, in sjis
        byte[] set = "SET NAMES sjis; ".getBytes(Charset.forName("SJIS"));
        byte[] select = "SELECT '予', GET_LOCK('k', 0)".getBytes(Charset.forName("SJIS"));
        byte[] both = new byte[set.length + select.length];
        System.arraycopy(set, 0, both, 0, set.length);
        System.arraycopy(select, 0, both, set.length, select.length);
        StatementScan read = new StatementScan().scan(both);
        assertThat(read.assignments().charsetSet()).isEqualTo(ClientCharsets.ASCII_TRAILS);
        assertThat(read.effects() & SessionEffects.STORED_CODE).isNotZero();
    }

    static Stream<Arguments> assignments() {
        return Stream.of(
                Arguments.of("SELECT 1", ClientCharsets.NOT_SET),
                Arguments.of("SET NAMES utf8mb4", ClientCharsets.SAFE),
                Arguments.of("SET NAMES 'utf8mb4' COLLATE 'utf8mb4_bin'", ClientCharsets.SAFE),
                Arguments.of("set names latin1", ClientCharsets.SAFE),
                Arguments.of("SET NAMES sjis", ClientCharsets.ASCII_TRAILS),
                Arguments.of("SET NAMES `GBK`", ClientCharsets.ASCII_TRAILS),
                Arguments.of("SET NAMES DEFAULT", ClientCharsets.ASCII_TRAILS),
                Arguments.of("SET CHARACTER SET big5", ClientCharsets.ASCII_TRAILS),
                Arguments.of("SET CHARACTER SET utf8", ClientCharsets.SAFE),
                Arguments.of("SET CHARSET 'cp932'", ClientCharsets.ASCII_TRAILS),
                Arguments.of("SET character_set_client = gb18030", ClientCharsets.ASCII_TRAILS),
                Arguments.of("SET @@session.character_set_client := utf8mb4", ClientCharsets.SAFE),
                Arguments.of("SET SESSION character_set_client = @saved_cs_client", ClientCharsets.ASCII_TRAILS),
                Arguments.of("/*!40101 SET character_set_client = utf8 */", ClientCharsets.SAFE),
                Arguments.of("SET character_set_results = sjis", ClientCharsets.NOT_SET),
                Arguments.of("SET @names = 'sjis'", ClientCharsets.NOT_SET),
                Arguments.of("SET NAMES utf8mb4; SET NAMES sjis", ClientCharsets.ASCII_TRAILS));
    }

    @ParameterizedTest
    @MethodSource("assignments")
    void readsTheSetAStatementNames(String sql, int expected) {
        assertThat(new StatementScan().scan(sql).assignments().charsetSet()).as(sql).isEqualTo(expected);
    }

    static Stream<Arguments> sqlModes() {
        // the statement, what its modes make unread, whether it adds to the session's own
        return Stream.of(
                Arguments.of("SET sql_mode = 'NO_BACKSLASH_ESCAPES'", UnreadText.BACKSLASH, false),
                Arguments.of("SET SESSION sql_mode = CONCAT(@@sql_mode, ',ANSI_QUOTES')", UnreadText.DOUBLE_QUOTE,
                        true),
                // MariaDB Connector/J at connect: nothing that changes the reading, the session's own kept
                Arguments.of("set autocommit=1, sql_mode = concat(@@sql_mode,',STRICT_TRANS_TABLES')", 0, true),
                Arguments.of("SET @@sql_mode := 'STRICT_ALL_TABLES', @x = '\\'", 0, false),
                Arguments.of("SET sql_mode = 'ansi'", UnreadText.DOUBLE_QUOTE, false),
                Arguments.of("SET sql_mode = ORACLE", UnreadText.DOUBLE_QUOTE, false),
                Arguments.of("SET sql_mode = DEFAULT", UnreadText.ANY_SQL_MODE, false),
                Arguments.of("SET sql_mode = @saved", UnreadText.ANY_SQL_MODE, false),
                Arguments.of("SET sql_mode = @@GLOBAL.sql_mode", UnreadText.ANY_SQL_MODE, false),
                Arguments.of("SET sql_mode = 4", UnreadText.ANY_SQL_MODE, false),
                Arguments.of("SET sql_mode = REPLACE(@@sql_mode, 'ANSI_QUOTES', '')", UnreadText.DOUBLE_QUOTE, true));
    }

    @ParameterizedTest
    @MethodSource("sqlModes")
    void readsTheSqlModeAStatementSets(String sql, int unread, boolean kept) {
        LexicalAssignments read = new StatementScan().scan(sql).assignments();
        assertThat(read.sqlModeSet()).as(sql).isTrue();
        assertThat(read.sqlModeUnread()).as(sql).isEqualTo(unread);
        assertThat(read.sqlModeKept()).as(sql).isEqualTo(kept);
    }

    @Test
    void aStatementScopedSqlModeChangesNothingOfTheSessions() {
        LexicalAssignments read = new StatementScan().scan("SET STATEMENT sql_mode = 'ANSI_QUOTES' FOR SELECT 1")
                .assignments();
        assertThat(read.sqlModeSet()).isFalse();
        assertThat(new StatementScan().scan("SELECT @@sql_mode").assignments().sqlModeSet()).isFalse();
    }

    @Test
    void aBackslashOrADoubleQuoteIsHiddenCodeInTheModesThatReadThemOtherwise() {
        String nbe = "SELECT 'a\\', GET_LOCK('k', 0), '\\'";
        StatementScan read = new StatementScan(() -> HiddenCodeNames.NONE, () -> UnreadText.BACKSLASH).scan(nbe);
        assertThat(read.effects() & SessionEffects.STORED_CODE).isNotZero();
        assertThat(new StatementScan().scan(nbe).effects() & (SessionEffects.GET_LOCK | SessionEffects.STORED_CODE))
                .as("read in the default mode, the lock is in a string").isZero();
        String ansi = "SELECT 1 AS \"a\\\", GET_LOCK('k', 0) AS \"\\\"";
        read = new StatementScan(() -> HiddenCodeNames.NONE, () -> UnreadText.DOUBLE_QUOTE).scan(ansi);
        assertThat(read.effects() & SessionEffects.STORED_CODE).isNotZero();
        // ANSI_QUOTES: a double-quoted name before ( may be a stored function or GET_LOCK; a plain one reads alike
        read = new StatementScan(() -> HiddenCodeNames.NONE, () -> UnreadText.DOUBLE_QUOTE)
                .scan("SELECT \"lock_f\"('k')");
        assertThat(read.effects() & SessionEffects.STORED_CODE).isNotZero();
        read = new StatementScan(() -> HiddenCodeNames.of(java.util.List.of("orders")),
                () -> UnreadText.DOUBLE_QUOTE).scan("INSERT INTO \"orders\" VALUES (1)");
        assertThat(read.effects() & SessionEffects.STORED_CODE).as("a table with hidden code").isNotZero();
        read = new StatementScan(() -> HiddenCodeNames.NONE, () -> UnreadText.DOUBLE_QUOTE)
                .scan("SELECT \"sm\".\"id\" FROM \"sm\"");
        assertThat(read.effects() & SessionEffects.STORED_CODE).isZero();
        read = new StatementScan(() -> HiddenCodeNames.NONE, () -> UnreadText.ANY_SQL_MODE).scan("SELECT 'it''s'");
        assertThat(read.effects() & SessionEffects.STORED_CODE).as("no backslash, no double quote").isZero();
        // a multi-statement that sets a sql_mode: what follows may be read otherwise
        read = new StatementScan().scan("SET sql_mode = 'NO_BACKSLASH_ESCAPES'; SELECT 'a\\', GET_LOCK('k', 0)");
        assertThat(read.effects() & SessionEffects.STORED_CODE).isNotZero();
    }

    @Test
    void namesTheSetsByHandshakeCollation() {
        assertThat(ClientCharsets.asciiTrails(13)).as("sjis_japanese_ci").isTrue();
        assertThat(ClientCharsets.asciiTrails(28)).as("gbk_chinese_ci").isTrue();
        assertThat(ClientCharsets.asciiTrails(45)).as("utf8mb4_general_ci").isFalse();
        assertThat(ClientCharsets.asciiTrails(8)).as("latin1_swedish_ci").isFalse();
        assertThat(ClientCharsets.asciiTrails("Big5")).isTrue();
        assertThat(ClientCharsets.asciiTrails("utf8mb3")).isFalse();
    }
}
