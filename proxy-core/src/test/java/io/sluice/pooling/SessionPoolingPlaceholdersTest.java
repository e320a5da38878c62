package io.sluice.pooling;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * How many parameters {@link SessionPooling} reads an execute as having when MariaDB Connector/J sends it right
 * behind its prepare, before the server said (decision 106). A wrong guess is caught by the server's count, so these
 * only check that the usual texts are read right, and that text it does not understand is not guessed at.
 */
class SessionPoolingPlaceholdersTest {

    @Test
    void countsQuestionMarksOutsideQuotesAndComments() {
        assertThat(SessionPooling.placeholders("SELECT c FROM sbtest1 WHERE id = ?")).isEqualTo(1);
        assertThat(SessionPooling.placeholders("INSERT INTO t (a, b, c) VALUES (?, ?, ?)")).isEqualTo(3);
        assertThat(SessionPooling.placeholders("SELECT v || '!' FROM t WHERE id = ?")).isEqualTo(1);
        assertThat(SessionPooling.placeholders("SELECT 'a?', \"b?\", `c?` FROM t WHERE x = ?")).isEqualTo(1);
        assertThat(SessionPooling.placeholders("SELECT 'it''s ?', 'back\\'slash ?' WHERE y = ?")).isEqualTo(1);
        assertThat(SessionPooling.placeholders("SELECT ? # why?\n, ? -- and ?\n")).isEqualTo(2);
        assertThat(SessionPooling.placeholders("SELECT /* ? */ ?")).isEqualTo(1);
        assertThat(SessionPooling.placeholders("SELECT 1")).isZero();
    }

    @Test
    void textItDoesNotReadIsNotGuessed() {
        assertThat(SessionPooling.placeholders("SELECT /*! ? */ ?")).isEqualTo(-1);
        assertThat(SessionPooling.placeholders("SELECT /*M! ? */ ?")).isEqualTo(-1);
        assertThat(SessionPooling.placeholders("SELECT ? /* unclosed")).isEqualTo(-1);
    }
}
