package io.sluice.relay;

/** Where a {@link ResponseTracker} is in the response it follows: what the next packet can be. */
enum ResponseState {
    /** Nothing expected: any packet is a protocol violation. */
    IDLE,
    /** The first packet of a (text or binary) result. */
    RESULT_FIRST,
    COLUMNS,
    COLUMNS_EOF,
    ROWS,
    /** Rows, each classified for a watch that {@link ResponseWatch#watchesRows() watches rows}. */
    ROWS_WATCHED,
    PREPARE_OK,
    PREPARE_PARAMS,
    PREPARE_PARAMS_EOF,
    PREPARE_COLUMNS,
    PREPARE_COLUMNS_EOF,
    FIELD_LIST,
    SINGLE
}
