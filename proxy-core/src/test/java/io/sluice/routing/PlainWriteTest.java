package io.sluice.routing;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.testing.MySqlWire;
import org.junit.jupiter.api.Test;

/** Which statements may run again on a new primary after the old one refused them as read-only (decision 178). */
class PlainWriteTest {

    private static boolean plain(String sql) {
        ByteBuf frame = Unpooled.wrappedBuffer(MySqlWire.frame(0, MySqlWire.comQuery(sql)));
        try {
            int before = frame.readerIndex();
            boolean answer = PlainWrite.startsWith(frame);
            assertThat(frame.readerIndex()).isEqualTo(before);
            return answer;
        } finally {
            frame.release();
        }
    }

    @Test
    void rowWritesAreThePlainOnes() {
        assertThat(plain("INSERT INTO t VALUES (1)")).isTrue();
        assertThat(plain("  insert into t values (1)")).isTrue();
        assertThat(plain("UPDATE t SET a = 1")).isTrue();
        assertThat(plain("delete FROM t")).isTrue();
        assertThat(plain("Replace INTO t VALUES (1)")).isTrue();
        assertThat(plain("\n\tINSERT\tINTO t VALUES (1)")).isTrue();
    }

    @Test
    void anythingElseIsNot() {
        assertThat(plain("CALL p()")).isFalse();
        assertThat(plain("CREATE TABLE x (a INT)")).isFalse();
        assertThat(plain("LOAD DATA LOCAL INFILE 'f' INTO TABLE t")).isFalse();
        assertThat(plain("/* c */ INSERT INTO t VALUES (1)")).isFalse();
        assertThat(plain("INSERTS")).isFalse();
        assertThat(plain("INSERT_x")).isFalse();
        assertThat(plain("INSERT")).isFalse(); // nothing after the word
        assertThat(plain("SELECT 1")).isFalse();
        assertThat(plain("")).isFalse();
    }
}
