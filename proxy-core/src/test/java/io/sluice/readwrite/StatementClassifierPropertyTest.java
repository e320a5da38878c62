package io.sluice.readwrite;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** The classifier never throws, whatever the bytes, and reads bytes as it reads text. */
class StatementClassifierPropertyTest {

    @Property(tries = 3000)
    void neverThrowsOnArbitraryBytes(@ForAll byte[] bytes) {
        int statementClass = StatementClassifier.classify(bytes);
        assertThat(StatementClassifier.reason(statementClass)).isNotNull();
        assertThat(StatementClassifier.transaction(statementClass)).isNotNull();
        ByteBuf buf = Unpooled.wrappedBuffer(bytes);
        try {
            assertThat(StatementClassifier.classify(buf, 0, bytes.length)).isEqualTo(statementClass);
        } finally {
            buf.release();
        }
    }

    @Property(tries = 3000)
    void neverThrowsOnSqlLikeText(@ForAll("sqlLike") String sql) {
        int statementClass = StatementClassifier.classify(sql);
        assertThat(StatementClassifier.classify(sql.getBytes(StandardCharsets.UTF_8))).isEqualTo(statementClass);
    }

    /** Anything behind a primary hint goes to the primary; a write behind a replica hint still does. */
    @Property(tries = 1000)
    void aPrimaryHintAlwaysWins(@ForAll("sqlLike") String sql) {
        String hinted = "/* sluice: primary */ " + sql.replace("*/", "");
        assertThat(StatementClassifier.route(StatementClassifier.classify(hinted))).isEqualTo(Route.PRIMARY);
    }

    /** Text that only differs in the case of its letters is classified alike (keywords have no case). */
    @Property(tries = 1000)
    void caseDoesNotMatter(@ForAll("sqlLike") String sql) {
        assertThat(StatementClassifier.classify(sql.toUpperCase(java.util.Locale.ROOT)))
                .isEqualTo(StatementClassifier.classify(sql.toLowerCase(java.util.Locale.ROOT)));
    }

    @Provide
    Arbitrary<String> sqlLike() {
        Arbitrary<String> pieces = Arbitraries.of("SELECT", "select", "INSERT", "FOR", "UPDATE", "SHARE", "LOCK",
                "IN", "MODE", "INTO", "@a", "@@autocommit", "=", "0", "1", "(", ")", ";", ",", "'", "\"", "`", "/*",
                "*/", "/*!", "--", "#", "\n", " ", "sluice:", "primary", "replica", "GET_LOCK", "NEXT", "VALUE",
                "WITH", "SET", "STATEMENT", "START", "TRANSACTION", "READ", "ONLY", "COMMIT", "AND", "CHAIN", "SHOW",
                "WARNINGS", "LAST_INSERT_ID", "x", "t", ".", "ö", "\\");
        return pieces.list().ofMaxSize(25).map(list -> String.join(" ", list));
    }
}
