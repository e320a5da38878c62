/**
 * The command lines: the standalone proxy ({@link io.sluice.bootstrap.SluiceMain}, which starts
 * {@code ops.SluiceServer} and watches config.yaml) and {@code sluice-ctl} ({@link io.sluice.bootstrap.SluiceCtl}).
 *
 * <p>Layer: the top; it may use every package of proxy-core and {@code replay}, and nothing uses it.
 */
package io.sluice.bootstrap;
