/**
 * A session's server-side state as Sluice follows it: session variables, the session trackers the server reports,
 * and prepared statements with their cache.
 *
 * <p>Layer: the foundation; it uses {@code protocol} only. {@code backend} and {@code pooling} read and write it.
 */
package io.sluice.state;
