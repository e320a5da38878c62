/**
 * The MySQL client/server protocol under MySQL's names: constants (capabilities, server status, commands, error
 * codes), the packets Sluice reads and writes (greeting, HandshakeResponse41, OK and ERR, COM_CHANGE_USER), and
 * the scramble.
 *
 * <p>Layer: the bottom; it depends on no other Sluice package. The only package that uses ShardingSphere's
 * classes (decision 002).
 */
package io.sluice.protocol;
