package io.sluice.layering.cycle.relay;

import io.sluice.layering.cycle.frontend.ClientReader;

/**
 * A fixture for {@code LayeringRuleTest}: a relay class that calls up into the frontend, the kind of edge that
 * closes a cycle. Never used outside that test.
 */
public final class ResponseReader {

    /** The upward call. */
    public void done(ClientReader client) {
        client.responseEnded();
    }
}
