package io.sluice.backend;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.protocol.ErrorCode;
import io.sluice.protocol.Packets;
import io.sluice.protocol.ServerErrors;
import org.junit.jupiter.api.Test;

/**
 * Which replica responses the relay keeps from the client so that the statement runs again on the primary
 * (decision 110): exactly one whole ERR packet that says the server refused a write, 1792 or 1290.
 */
class WriteRefusalTest {

    private static boolean refusal(ByteBuf buf) {
        try {
            return ServerErrors.isWriteRefusal(buf);
        } finally {
            buf.release();
        }
    }

    @Test
    void keepsOnlyAWholeReadOnlyRefusal() {
        assertThat(refusal(Packets.err(Unpooled.buffer().alloc(), 1,
                ErrorCode.ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION, "Cannot execute statement in a READ ONLY"
                        + " transaction"))).isTrue();
        assertThat(refusal(Packets.err(Unpooled.buffer().alloc(), 1, ErrorCode.ER_OPTION_PREVENTS_STATEMENT,
                "The MariaDB server is running with the --read-only option"))).isTrue();
        // another error is the client's
        assertThat(refusal(Packets.err(Unpooled.buffer().alloc(), 1, 1146, "42S02", "Table doesn't exist")))
                .isFalse();
        // an OK
        assertThat(refusal(Packets.ok(Unpooled.buffer().alloc(), 1, 2))).isFalse();
        // a refusal with more after it (a pipelined response), or cut short: not the whole response
        ByteBuf two = Packets.err(Unpooled.buffer().alloc(), 1, ErrorCode.ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION,
                "x");
        ByteBuf ok = Packets.ok(Unpooled.buffer().alloc(), 1, 2);
        two.writeBytes(ok);
        ok.release();
        assertThat(refusal(two)).isFalse();
        ByteBuf cut = Packets.err(Unpooled.buffer().alloc(), 1, ErrorCode.ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION,
                "x");
        assertThat(refusal(cut.writerIndex(cut.writerIndex() - 1))).isFalse();
    }
}
