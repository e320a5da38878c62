/**
 * MySQL packet framing: the client pipeline's frame decoder and the backend's frame reader, which cut a byte stream
 * into packets without copying them.
 *
 * <p>Layer: just above {@code protocol} and the foundation; below {@code relay} and everything that reads packets.
 */
package io.sluice.codec;
