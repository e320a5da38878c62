package io.sluice.state;

/**
 * The session trackers a new connection to the server starts with (the global values of {@code session_track_*}):
 * what a client sees reported on a connection of its own, before it changes them.
 *
 * @param systemVariables {@code session_track_system_variables}: a comma list of names, or {@code *}
 * @param schema {@code session_track_schema}
 * @param stateChange {@code session_track_state_change}
 * @param gtids whether the client is shown {@code SESSION_TRACK_GTIDS} reports: on MySQL, {@code session_track_gtids}
 *     is not {@code OFF}; on MariaDB always (Sluice never turns a GTID tracker on there, so any such report is the
 *     client's own doing)
 */
public record TrackerDefaults(String systemVariables, boolean schema, boolean stateChange, boolean gtids) {

    /** MariaDB's: no {@code session_track_gtids} to read. */
    public TrackerDefaults(String systemVariables, boolean schema, boolean stateChange) {
        this(systemVariables, schema, stateChange, true);
    }

    /** Reads the three values as the server shows them ({@code ON}/{@code OFF} or {@code 1}/{@code 0}): MariaDB. */
    public static TrackerDefaults of(String systemVariables, String schema, String stateChange) {
        return new TrackerDefaults(systemVariables == null ? "" : systemVariables, on(schema), on(stateChange));
    }

    /**
     * As {@link #of(String, String, String)}, with MySQL's {@code session_track_gtids} ({@code OFF},
     * {@code OWN_GTID}, {@code ALL_GTIDS}); {@code null} when not read (MariaDB).
     */
    public static TrackerDefaults of(String systemVariables, String schema, String stateChange, String gtids) {
        if (gtids == null) {
            return of(systemVariables, schema, stateChange);
        }
        return new TrackerDefaults(systemVariables == null ? "" : systemVariables, on(schema), on(stateChange),
                gtidsOn(gtids));
    }

    /** Whether a {@code session_track_gtids} value reports GTIDs: anything but {@code OFF} (or {@code 0}). */
    public static boolean gtidsOn(String value) {
        return value != null && !value.equalsIgnoreCase("OFF") && !value.equals("0") && !value.isEmpty();
    }

    private static boolean on(String value) {
        return "ON".equalsIgnoreCase(value) || "1".equals(value);
    }
}
