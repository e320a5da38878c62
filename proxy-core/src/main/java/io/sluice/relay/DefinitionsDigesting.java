package io.sluice.relay;

import io.netty.buffer.ByteBuf;
import io.sluice.protocol.ProtocolException;

/**
 * Digests the column definitions of one response as they pass ({@link ResponseTracker#digestDefinitions}): session
 * pooling with MariaDB's metadata caching, for a session that may move (issue #31). A {@link ResponseWatch} of the
 * response it was asked for only; every other response pays nothing for it.
 */
final class DefinitionsDigesting implements ResponseWatch {

    private final ResponseOutcome outcome;
    private final ColumnDefinitionsDigest digest = new ColumnDefinitionsDigest();
    /** A result that leaves its definitions out breaks the connection. */
    private boolean required;
    /** The packet being read is a column definition: its bytes go in. */
    private boolean inDefinition;

    DefinitionsDigesting(ResponseOutcome outcome) {
        this.outcome = outcome;
    }

    /** The response just begun is digested; a COM_STMT_PREPARE_OK ({@code prepare}) always carries definitions. */
    void start(boolean definitionsRequired, boolean prepare) {
        digest.reset();
        required = definitionsRequired;
        inDefinition = false;
        outcome.definitionsSent = prepare;
    }

    @Override
    public boolean packet(ResponsePacket p) {
        if (p.role == ResponsePacket.Role.COLUMN_DEFINITION) {
            digest.beginPacket(p.payloadLength);
            inDefinition = true;
            return true;
        }
        if (p.role == ResponsePacket.Role.COLUMN_COUNT) {
            if (!p.metadataFollows) {
                if (required) {
                    throw new ProtocolException("result without column definitions (metadata follows 0)"
                            + " for a statement that moved: the client's definitions are another server's");
                }
            } else if (p.columns > 0) {
                outcome.definitionsSent = true;
            }
        }
        return false;
    }

    @Override
    public void payload(ByteBuf buf, int index, int length) {
        if (inDefinition) {
            digest.update(buf, index, length);
        }
    }

    @Override
    public void packetEnded(int end, int sequenceId) {
        inDefinition = false;
    }

    @Override
    public void responseEnded(ResponseOutcome ended) {
        ended.definitionsDigest = digest.value(); // the last definition may be the packet just ended
    }
}
