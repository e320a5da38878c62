package io.sluice.config;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;

/**
 * PROXY protocol (v1 text or v2 binary) on the client listener, for Sluice behind a load balancer (HAProxy,
 * AWS NLB, Kubernetes ingress): a connection from one of {@code trustedNetworks} may start with a PROXY header naming
 * the real client, whose address then counts for {@code user@host}, the login back-off, logs and
 * {@code /api/sessions}. A header from any other address closes the connection: anyone could forge one. Off while
 * the list is empty.
 *
 * @param trustedNetworks CIDR blocks ({@code 10.0.0.0/8}, {@code 127.0.0.1/32}, {@code ::1/128}) or single addresses
 * @see <a href="https://www.haproxy.org/download/2.8/doc/proxy-protocol.txt">The PROXY protocol</a>
 */
public record ProxyProtocol(List<String> trustedNetworks) {

    public ProxyProtocol {
        trustedNetworks = List.copyOf(trustedNetworks);
        for (String network : trustedNetworks) {
            parse(network); // refused at load time, not at the first connection
        }
    }

    /** No PROXY header accepted from anyone: the default. */
    public static ProxyProtocol off() {
        return new ProxyProtocol(List.of());
    }

    public boolean enabled() {
        return !trustedNetworks.isEmpty();
    }

    /** Whether a connection from {@code peer} may name its client with a PROXY header. */
    public boolean trusts(InetAddress peer) {
        byte[] address = peer.getAddress();
        for (String network : trustedNetworks) {
            Block block = parse(network);
            if (block.contains(address)) {
                return true;
            }
        }
        return false;
    }

    private record Block(byte[] network, int prefixLength) {
        boolean contains(byte[] address) {
            if (address.length != network.length) {
                return false;
            }
            int full = prefixLength / 8;
            for (int i = 0; i < full; i++) {
                if (address[i] != network[i]) {
                    return false;
                }
            }
            int rest = prefixLength % 8;
            if (rest == 0) {
                return true;
            }
            int mask = (0xFF << (8 - rest)) & 0xFF;
            return (address[full] & mask) == (network[full] & mask);
        }
    }

    private static Block parse(String cidr) {
        int slash = cidr.indexOf('/');
        String host = slash < 0 ? cidr.trim() : cidr.substring(0, slash).trim();
        if (host.isEmpty() || !(host.indexOf(':') >= 0 || Character.isDigit(host.charAt(0)))) {
            throw new IllegalArgumentException("trustedNetworks: '" + cidr + "' (expected: an IP address or CIDR block)");
        }
        byte[] network;
        try {
            network = InetAddress.getByName(host).getAddress(); // a literal: no lookup
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("trustedNetworks: '" + cidr + "' (expected: an IP address or CIDR block)");
        }
        int bits = network.length * 8;
        int prefix;
        try {
            prefix = slash < 0 ? bits : Integer.parseInt(cidr.substring(slash + 1).trim());
        } catch (NumberFormatException e) {
            prefix = -1;
        }
        if (prefix < 0 || prefix > bits) {
            throw new IllegalArgumentException("trustedNetworks: '" + cidr + "' (expected: a prefix length 0.." + bits
                    + ")");
        }
        return new Block(network, prefix);
    }
}
