/**
 * The configuration model ({@link io.sluice.config.ProxyConfig} and its records) and its reading from config.yaml
 * ({@link io.sluice.config.ConfigYaml}), with the validation that names the offending key.
 *
 * <p>Layer: the foundation. It uses {@code auth} (a user's credential) and the balancer's policy and health-check
 * settings, nothing above.
 */
package io.sluice.config;
