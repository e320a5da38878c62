package io.sluice.rules;

import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * A rule's {@code network}: an address block in CIDR form ({@code 10.0.0.0/8}, {@code fd00::/8}; a bare address is
 * the block of that one address). An IPv4 client seen through an IPv6 socket ({@code ::ffff:10.1.2.3}) matches
 * an IPv4 block, as MySQL's host matching treats it.
 */
final class ClientNetwork {

    private final byte[] prefix;
    private final int bits;
    private final String text;

    private ClientNetwork(byte[] prefix, int bits, String text) {
        this.prefix = prefix;
        this.bits = bits;
        this.text = text;
    }

    /** Parses a block config.yaml's reader has already checked (numbers only: nothing is resolved). */
    static ClientNetwork of(String cidr) {
        int slash = cidr.indexOf('/');
        String address = slash < 0 ? cidr : cidr.substring(0, slash);
        try {
            byte[] bytes = InetAddress.getByName(address).getAddress();
            int bits = slash < 0 ? bytes.length * 8 : Integer.parseInt(cidr.substring(slash + 1));
            return new ClientNetwork(bytes, bits, cidr);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("network: " + cidr + " (expected: an address in numbers)", e);
        }
    }

    /** Whether {@code client} (or {@code null}: a Unix socket's client, in no network) is in the block. */
    boolean contains(InetAddress client) {
        if (client == null) {
            return false;
        }
        byte[] address = client.getAddress();
        if (address.length == 16 && prefix.length == 4 && isMappedIpv4(address)) {
            byte[] v4 = new byte[4];
            System.arraycopy(address, 12, v4, 0, 4);
            address = v4;
        }
        if (address.length != prefix.length) {
            return false;
        }
        int full = bits / 8;
        for (int i = 0; i < full; i++) {
            if (address[i] != prefix[i]) {
                return false;
            }
        }
        int rest = bits % 8;
        if (rest == 0) {
            return true;
        }
        int mask = 0xFF << (8 - rest) & 0xFF;
        return (address[full] & mask) == (prefix[full] & mask);
    }

    private static boolean isMappedIpv4(byte[] address) {
        for (int i = 0; i < 10; i++) {
            if (address[i] != 0) {
                return false;
            }
        }
        return address[10] == (byte) 0xFF && address[11] == (byte) 0xFF;
    }

    @Override
    public String toString() {
        return text;
    }
}
