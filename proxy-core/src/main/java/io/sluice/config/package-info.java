/**
 * What Sluice is told to do: the configuration records ({@link io.sluice.config.ProxyConfig} and the records it is
 * made of) and the config.yaml reader that builds them ({@link io.sluice.config.ConfigYaml}).
 *
 * <p>Layer: the foundation (decision 065). The rest of proxy-core reads these records to build the proxy; this
 * package depends on nothing of Sluice but {@code io.sluice.auth} (to refuse a password hash in no known form
 * before the proxy starts) and the balancer module (whose policy and health-check records the file configures).
 * Records are immutable and check their own values; the reader only adds where in the file a value came from.
 *
 * <p>Reading config.yaml has three parts: {@link io.sluice.config.ConfigYaml} reads the text and its top level,
 * {@code SectionReaders} reads each section into its record, and {@code YamlSection} gives them typed getters and
 * refuses every key in the file that no getter asked for. See docs/configuration.md for the keys and
 * docs/decisions/001-config-yaml-in-core.md for why the reader lives here.
 */
package io.sluice.config;
