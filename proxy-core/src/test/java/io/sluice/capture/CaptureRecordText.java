package io.sluice.capture;

import io.sluice.capture.CaptureRecord.CommandRecord;
import java.util.Arrays;
import java.util.List;

/** Records as text, so that tests compare them by content: {@link CommandRecord}'s payload is an array. */
final class CaptureRecordText {
    private CaptureRecordText() {
    }

    static List<String> of(List<CaptureRecord> records) {
        return records.stream().map(CaptureRecordText::of).toList();
    }

    static String of(CaptureRecord record) {
        return record instanceof CommandRecord c
                ? "CommandRecord[" + c.sessionId() + " " + c.timeNanos() + " " + c.durationNanos() + " " + c.command()
                        + " " + Arrays.toString(c.payload()) + " " + c.truncated() + " " + c.outcome() + " "
                        + c.errorCode() + " " + c.affectedRows() + " " + c.rows() + " " + c.statementId() + "]"
                : record.toString();
    }
}
