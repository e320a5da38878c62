package io.sluice.state;

/**
 * The session trackers a new connection to the server starts with (the global values of {@code session_track_*}):
 * what a client sees reported on a connection of its own, before it changes them.
 *
 * @param systemVariables {@code session_track_system_variables}: a comma list of names, or {@code *}
 * @param schema {@code session_track_schema}
 * @param stateChange {@code session_track_state_change}
 */
public record TrackerDefaults(String systemVariables, boolean schema, boolean stateChange) {

    /** Reads the three values as the server shows them ({@code ON}/{@code OFF} or {@code 1}/{@code 0}). */
    public static TrackerDefaults of(String systemVariables, String schema, String stateChange) {
        return new TrackerDefaults(systemVariables == null ? "" : systemVariables, on(schema), on(stateChange));
    }

    private static boolean on(String value) {
        return "ON".equalsIgnoreCase(value) || "1".equals(value);
    }
}
