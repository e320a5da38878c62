/**
 * Traffic capture: the per-session hook's records, the bounded queue and writer thread, the file format and its
 * blocks, and the admin endpoints that start and stop a capture (docs/traffic-capture.md).
 *
 * <p>Layer: above {@code relay}, whose response observer tells it each command's outcome, {@code protocol} and the
 * foundation ({@code json}); below {@code backend} and {@code frontend}, which feed it, and {@code replay}, which
 * reads its files.
 */
package io.sluice.capture;
