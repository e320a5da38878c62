package io.sluice.statistics;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.sql.SqlDigest;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The shape hash finds a statement's digest without making it: two statements of one shape have one digest (the
 * hash never merges what the digest tells apart), and statements that differ only where the digest does not look
 * (literals, list lengths, rows, comments, spacing, keyword case) have one shape.
 */
class StatementShapeTest {

    private final StatementShape shapes = new StatementShape();

    private long shape(String sql) {
        ByteBuf buf = Unpooled.copiedBuffer(sql, StandardCharsets.UTF_8);
        try {
            return shapes.of(buf, 0, buf.writerIndex());
        } finally {
            buf.release();
        }
    }

    @Test
    void statementsThatDifferOnlyInValuesHaveOneShape() {
        List<List<String>> same = List.of(
                List.of("SELECT c FROM sbtest1 WHERE id=1", "select c from sbtest1 where id = 4242",
                        "SELECT  c\n FROM sbtest1 /* hint */ WHERE id = ?", "SELECT c FROM sbtest1 WHERE id=-7"),
                List.of("SELECT * FROM t WHERE id IN (1, 2, 3)", "SELECT * FROM t WHERE id IN (4,5)",
                        "select * from t where id in (?, ?, ?, ?, ?, ?)", "SELECT * FROM t WHERE id IN (9)",
                        "SELECT * FROM t WHERE id IN (-1, -2, +3)"),
                List.of("INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')", "INSERT INTO t VALUES (7, 'x')",
                        "insert into t values (?, ?)", "INSERT INTO t VALUES (1, NULL), (2, 'b')"),
                List.of("UPDATE t SET c = 'it''s' WHERE k BETWEEN 1 AND 10",
                        "update t set c = \"x\" where k between 5 and 6"),
                List.of("SELECT SLEEP(1)", "SELECT SLEEP(25)"),
                List.of("SELECT a FROM t WHERE b IS NULL", "select a from t where b is null"),
                List.of("SELECT f(1, 2, x) FROM t", "SELECT f(3, 4, x) FROM t", "SELECT f(5, 6, 7, x) FROM t"));
        for (List<String> group : same) {
            long first = shape(group.get(0));
            for (String other : group) {
                assertThat(shape(other)).as(other + " vs " + group.get(0)).isEqualTo(first);
                assertThat(SqlDigest.of(other).text()).as(other).isEqualTo(SqlDigest.of(group.get(0)).text());
            }
        }
    }

    @Test
    void oneShapeNeverHasTwoDigests() {
        String[] corpus = {
            "SELECT c FROM sbtest1 WHERE id=1", "SELECT c FROM sbtest2 WHERE id=1", "SELECT pad FROM sbtest1 WHERE id=1",
            "SELECT c FROM sbtest1 WHERE id BETWEEN 1 AND 100", "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN 1 AND 9",
            "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN 1 AND 9 ORDER BY c", "SELECT a - 1 FROM t",
            "SELECT a -1 FROM t", "SELECT a FROM t WHERE b IS NULL", "SELECT a FROM t WHERE b = NULL",
            "SELECT a FROM t WHERE b IS NOT NULL", "SELECT `A` FROM t", "SELECT `a` FROM t", "SELECT A FROM t",
            "SELECT @x", "SELECT @@autocommit", "SELECT (1)", "SELECT (1, 2)", "SELECT f(1)", "SELECT f((1))",
            "INSERT INTO t VALUES (1), (2)", "INSERT INTO t VALUES (1, a), (2, b)", "INSERT INTO t VALUES (1, 2), (f(), 3)",
            "SELECT 1 -- c\n, 2", "SELECT /*!40001 SQL_NO_CACHE */ a FROM t", "SELECT a FROM t WHERE x IN (1, (2))",
            "SELECT 1 + -2", "SELECT 1 - - 2", "SELECT - a FROM t", "SELECT * FROM t LIMIT 10, 20",
            "SELECT * FROM t WHERE (a, b) IN ((1, 2), (3, 4))", "SELECT * FROM t WHERE (a, b) IN ((1, 2))",
            "CALL p(1, 2)", "SET @a = 1", "SET NAMES utf8mb4", "BEGIN", "COMMIT", "select 'naïve' from t",
            "DELETE FROM sbtest1 WHERE id=5", "INSERT INTO sbtest1 (id, k, c, pad) VALUES (5, 6, 'c', 'pad')",
            "SELECT a FROM t WHERE a = 'x", "INSERT INTO t VALUES (1, 2), (3,", "SELECT ?, ?", "SELECT ?",
        };
        Map<Long, String> digestByShape = new HashMap<>();
        for (String sql : corpus) {
            String digest = SqlDigest.of(sql).text();
            String known = digestByShape.putIfAbsent(shape(sql), digest);
            assertThat(known == null ? digest : known).as("the digest of the shape of " + sql).isEqualTo(digest);
        }
        assertThat(digestByShape).hasSizeGreaterThan(35);
    }

    @Test
    void readsTheFirstBytesOnlyAndTheirDigestAgrees() {
        StringBuilder rows = new StringBuilder("INSERT INTO t VALUES (0, 'x')");
        for (int i = 1; i < 2000; i++) {
            rows.append(", (").append(i).append(", 'x')");
        }
        String longer = rows.toString();
        String shorter = longer.substring(0, longer.length() / 2 + 3);
        assertThat(longer.length()).isGreaterThan(StatementShape.MAX_BYTES);
        assertThat(shape(longer)).isEqualTo(shape("INSERT INTO t VALUES (1, 'y')"));
        assertThat(shape(shorter)).isEqualTo(shape(longer));
    }
}
