/**
 * The slow-query log: the commands that took longer than the threshold, written with their SQL digest to the
 * {@code sluice.slowlog} logger.
 *
 * <p>Layer: the foundation; it uses {@code config} and {@code sql} (the digest) only.
 */
package io.sluice.slowlog;
