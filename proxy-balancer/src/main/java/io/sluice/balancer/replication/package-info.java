/**
 * Replication as read/write splitting sees it (issue #28): GTID positions of MariaDB ({@link
 * io.sluice.balancer.replication.MariaDbGtidPosition}) and MySQL ({@link io.sluice.balancer.replication.MySqlGtidSet})
 * and whether one is at or past another; the causal read's wait ({@link io.sluice.balancer.replication.CausalWait});
 * what a health check reads from each server of a group ({@link io.sluice.balancer.replication.ReplicationReading})
 * and which replicas may take reads now ({@link io.sluice.balancer.replication.ReplicaEligibility}).
 *
 * <p>Plain Java, no Netty and no network: proxy-core reads the servers and hands the readings in. See decision 097.
 */
package io.sluice.balancer.replication;
