/**
 * Following responses as they stream past: {@link io.sluice.relay.ResponseTracker} tells where each response ends,
 * without copying or parsing rows, and reports what it saw to a {@link io.sluice.relay.ResponseObserver}.
 *
 * <p>Layer: above {@code codec} and {@code protocol}; below {@code capture}, {@code backend} and everything that
 * relays.
 */
package io.sluice.relay;
