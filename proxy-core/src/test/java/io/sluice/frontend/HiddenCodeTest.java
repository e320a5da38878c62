package io.sluice.frontend;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.readwrite.StatementClassifier;
import io.sluice.sql.HiddenCodeNames;
import io.sluice.sql.RouteFacts;
import io.sluice.sql.SessionEffects;
import io.sluice.sql.StatementScan;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Decision 200: which trigger and view bodies count as code that leaves session state, and how a statement that names
 * their table or view is read. The server's side (a real trigger's lock, read from information_schema) is
 * {@code HiddenCodeIsolationTest}.
 */
class HiddenCodeTest {

    private static Map<String, String> row(String name, String code) {
        return code == null ? java.util.Collections.singletonMap("name", name) : Map.of("name", name, "code", code);
    }

    private static int effects(HiddenCodeNames names, String sql) {
        ByteBuf buf = Unpooled.copiedBuffer("\3" + sql, StandardCharsets.UTF_8);
        try {
            return new StatementScan(() -> names).scan(StatementClassifier.BYTES, buf, 1, buf.writerIndex())
                    .effects();
        } finally {
            buf.release();
        }
    }

    @Test
    void bodiesThatLeaveStateCountAndOnlyThose() {
        HiddenCodeNames found = HiddenCode.analyse(List.of(List.of(
                row("locked", "BEGIN DO GET_LOCK('k', 0); END"),
                row("drawn", "SET NEW.id = NEXTVAL(sq)"),
                row("next_ro", "SET TRANSACTION READ ONLY"),
                // statements of a body start after BEGIN, THEN, ELSE, DO, LOOP and REPEAT too
                row("next_ro_block", "BEGIN SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED, READ ONLY; END"),
                row("next_ro_if", "BEGIN IF NEW.n > 0 THEN SET NEW.n = 1; ELSE SET TRANSACTION READ ONLY; END IF; END"),
                row("quiet_block", "BEGIN IF NEW.n > 0 THEN SET NEW.n = 1; ELSE SET NEW.n = 2; END IF; END"),
                row("calls_f", "INSERT INTO log VALUES (audit_f(NEW.id))"),
                row("calls_p", "BEGIN CALL p(); END"),
                // an audit trigger: the row's columns, the session's user variable (the tracker reports those), a
                // built-in function, a SELECT into a local variable
                row("audited", "BEGIN DECLARE c INT; SELECT COUNT(*) INTO c FROM t; SET NEW.by_user = @app_user,"
                        + " NEW.at = NOW(); INSERT INTO log (n) VALUES (c); END"),
                row("plain_v", "select `db`.`t`.`a` AS `a`,concat(`db`.`t`.`b`,'x') AS `b` from `db`.`t`"),
                row("lock_v", "select get_lock('v',0) AS `got`"),
                // a view the account may not read (no SHOW VIEW): what it runs is not known
                row("hidden_v", ""))));

        assertThat(found.names()).containsExactlyInAnyOrder("locked", "drawn", "next_ro", "next_ro_block",
                "next_ro_if", "calls_f", "calls_p",
                "lock_v", "hidden_v");
    }

    @Test
    void aBodyThatWritesATableWithSuchATriggerCountsToo() {
        // chained: inserting into a cascades into b, whose trigger takes a lock; c's view reads a view that does
        HiddenCodeNames found = HiddenCode.analyse(List.of(
                List.of(row("a", "INSERT INTO b (n) VALUES (NEW.n)"), row("c_v", "select `x` from `lock_v`")),
                List.of(row("b", "DO GET_LOCK('k', 0)"), row("lock_v", "select get_lock('v',0) AS `x`"),
                        row("quiet", "INSERT INTO log (n) VALUES (NEW.n)"))));

        assertThat(found.names()).containsExactlyInAnyOrder("a", "b", "c_v", "lock_v");
    }

    @Test
    void aStatementThatNamesOneRunsCodeItsTextDoesNotShowWhereverTheNameStands() {
        HiddenCodeNames names = HiddenCodeNames.of(List.of("Locked", "lock_v", "naïve"));
        String[] naming = {"INSERT INTO locked (n) VALUES (1)", "insert into LOCKED values (1)",
            "UPDATE db.locked SET n = 2", "REPLACE INTO `locked` SET n = 3", "SELECT got FROM lock_v",
            "SELECT * FROM t JOIN `db`.`lock_v` USING (id)", "DELETE FROM naïve WHERE 1", "INSERT INTO `naïve` VALUES (1)",
            "SELECT 1; INSERT INTO locked VALUES (1)"};
        for (String sql : naming) {
            assertThat(effects(names, sql) & SessionEffects.STORED_CODE).as(sql).isNotZero();
            assertThat(new StatementScan(() -> names).scan(sql).routeFacts() & RouteFacts.SIDE_EFFECT)
                    .as("%s goes to a primary", sql).isNotZero();
        }
        String[] others = {"SELECT n FROM lockedx", "SELECT 'locked' FROM t", "SELECT n FROM t /* locked */",
            "SELECT locked_at FROM t", "SELECT naïve2 FROM t"};
        for (String sql : others) {
            assertThat(effects(names, sql) & ~SessionEffects.QUALIFIERS).as(sql).isZero();
            assertThat(new StatementScan(() -> names).scan(sql).routeFacts() & RouteFacts.SIDE_EFFECT).as(sql)
                    .isZero();
        }
        // with no names, nothing is looked up
        assertThat(effects(HiddenCodeNames.NONE, "INSERT INTO locked (n) VALUES (1)")).isZero();
    }

    @Test
    void definingATriggerOrAViewOrRenamingATableReadsThemAgainAndKeepsTheSessionOnItsConnection() {
        String[] defining = {"CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.n = 1",
            "create or replace view v as select 1", "ALTER VIEW v AS SELECT 2", "DROP TRIGGER IF EXISTS tr",
            "DROP VIEW v", "CREATE DEFINER = CURRENT_USER TRIGGER tr AFTER UPDATE ON t FOR EACH ROW DO 0",
            "CREATE ALGORITHM = MERGE VIEW v AS SELECT 1", "RENAME TABLE t TO u", "ALTER TABLE t RENAME TO u"};
        for (String sql : defining) {
            assertThat(effects(HiddenCodeNames.NONE, sql)).as(sql)
                    .isEqualTo(SessionEffects.DEFINES_HIDDEN_CODE | SessionEffects.STORED_CODE);
        }
        String[] others = {"CREATE TABLE view_log (n INT)", "SELECT trigger_name FROM information_schema.TRIGGERS",
            "CREATE TABLE t (a INT)", "DROP TABLE t", "INSERT INTO v VALUES (1)", "RENAME USER a TO b"};
        for (String sql : others) {
            assertThat(effects(HiddenCodeNames.NONE, sql) & (SessionEffects.DEFINES_HIDDEN_CODE
                    | SessionEffects.STORED_CODE)).as(sql).isZero();
        }
    }

    /**
     * Decision 203: what a definition names counts from its sending, through any reading that began before it ran,
     * until a reading begun after it ran has ended; that reading's own finding then stands. (No data source here:
     * each reading reads none and ends at once, finding nothing.)
     */
    @Test
    void aDefinitionsNamesCountFromItsSendingUntilAReadingAfterItRanHasEnded() {
        HiddenCode code = new HiddenCode(List::of);
        String trigger = "CREATE TRIGGER tr BEFORE INSERT ON orders FOR EACH ROW DO GET_LOCK('k', 0)";
        code.defining(trigger);
        assertThat(code.get().names()).containsExactly("orders");
        assertThat(effects(code.get(), "INSERT INTO orders (n) VALUES (1)") & SessionEffects.STORED_CODE).isNotZero();
        code.refresh().join(); // a scheduled reading, while the definition still runs: it may not have seen it
        assertThat(code.get().names()).containsExactly("orders");
        code.defined(trigger).join();
        assertThat(code.get().names()).as("the reading after it ran found no such trigger").isEmpty();
        code.defining("DROP TRIGGER tr"); // names nothing new: what was read stands until the next reading
        assertThat(code.get().names()).isEmpty();
    }
}
