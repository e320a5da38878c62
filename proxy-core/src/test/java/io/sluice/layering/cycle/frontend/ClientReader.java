package io.sluice.layering.cycle.frontend;

import io.sluice.layering.cycle.relay.ResponseReader;

/** A fixture for {@code LayeringRuleTest}: a frontend class using the relay below it, as it should. */
public final class ClientReader {
    private final ResponseReader reader = new ResponseReader();

    /** The downward call. */
    public void read() {
        reader.done(this);
    }

    /** Called back from the relay. */
    public void responseEnded() {
    }
}
