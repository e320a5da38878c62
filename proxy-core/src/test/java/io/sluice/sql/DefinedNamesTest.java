package io.sluice.sql;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Decision 203: the names a definition makes count from its sending, as the servers write them and mysqldump does. */
class DefinedNamesTest {

    static Stream<Arguments> definitions() {
        return Stream.of(
                Arguments.of("CREATE TRIGGER t BEFORE INSERT ON orders FOR EACH ROW DO GET_LOCK('k', 0)",
                        List.of("orders")),
                Arguments.of("create or replace definer=`app`@`%` trigger if not exists `shop`.`t` after update on"
                        + " `shop`.`Order Lines` for each row set @x = 1", List.of("Order Lines")),
                // mysqldump writes the parts in executable comments
                Arguments.of("/*!50003 CREATE*/ /*!50017 DEFINER=`root`@`localhost`*/ /*!50003 TRIGGER trg BEFORE"
                        + " INSERT ON t1 FOR EACH ROW SET NEW.s = NEXTVAL(sq) */", List.of("t1")),
                Arguments.of("CREATE VIEW v AS SELECT f() AS x", List.of("v")),
                Arguments.of("CREATE OR REPLACE ALGORITHM=MERGE SQL SECURITY INVOKER VIEW IF NOT EXISTS db.v2 AS"
                        + " SELECT 1 FROM t WHERE `on` = 1", List.of("v2")),
                Arguments.of("ALTER VIEW `my view` AS SELECT lock_f('k')", List.of("my view")),
                Arguments.of("RENAME TABLE a TO b, db.c TO db.d", List.of("b", "d")),
                Arguments.of("ALTER TABLE a RENAME TO b", List.of("b")),
                Arguments.of("ALTER TABLE a RENAME b", List.of("b")),
                Arguments.of("ALTER TABLE a RENAME COLUMN x TO y", List.of()),
                Arguments.of("DROP TRIGGER t", List.of()),
                Arguments.of("DROP VIEW v", List.of()),
                Arguments.of("CREATE TABLE x (n INT); CREATE TRIGGER y BEFORE DELETE ON x FOR EACH ROW DO 0;"
                        + " CREATE VIEW z AS SELECT 1", List.of("x", "z")),
                Arguments.of("", List.of()),
                // the statement's bytes, one character each: UTF-8 bytes give the name as read and as decoded
                Arguments.of(bytes("CREATE VIEW `vue_é` AS SELECT 1", StandardCharsets.UTF_8),
                        List.of(bytes("vue_é", StandardCharsets.UTF_8), "vue_é")),
                // latin1 bytes are no UTF-8: the name as read is the one
                Arguments.of(bytes("CREATE TRIGGER t BEFORE INSERT ON `attentes_è` FOR EACH ROW DO 0",
                        StandardCharsets.ISO_8859_1), List.of("attentes_è")),
                // text (a character past one byte) is taken as it is
                Arguments.of("CREATE VIEW `表` AS SELECT 1", List.of("表")));
    }

    /** {@code text} encoded in {@code charset}, its bytes one character each: what Sluice reads a statement as. */
    private static String bytes(String text, java.nio.charset.Charset charset) {
        return new String(text.getBytes(charset), StandardCharsets.ISO_8859_1);
    }

    @ParameterizedTest
    @MethodSource("definitions")
    void namesWhatTheDefinitionMakesCount(String sql, List<String> expected) {
        assertThat(DefinedNames.in(sql)).containsExactlyElementsOf(expected);
    }
}
