/**
 * Traffic replay: reads a capture and plays its sessions against a target server, each on a connection of its own
 * and at its captured pace, speaking the protocol itself (decision 033), and reports what happened. Also, offline, what
 * the query rules make of a capture: the allow-list learned from it ({@code sluice-ctl rules learn}) and what a rule
 * set would refuse of it ({@code sluice-ctl rules check}; decisions 188 and 189).
 *
 * <p>Layer: in proxy-bootstrap, above {@code capture}, {@code relay}, {@code codec}, {@code protocol} and the
 * foundation; it needs nothing of the proxy. Only {@code bootstrap}'s {@code sluice-ctl} uses it.
 */
package io.sluice.replay;
