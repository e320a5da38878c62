package io.sluice.auth;

import java.math.BigInteger;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

/**
 * MariaDB's ed25519 authentication ({@code auth_ed25519}, decision 172): Ed25519 (RFC 8032) whose secret is the
 * password itself, of any length, where RFC 8032 takes a 32-byte seed. The key is derived from SHA-512(password)
 * as RFC 8032 derives it from SHA-512(seed), so Java's own {@code Ed25519} (which takes only a 32-byte seed) cannot
 * sign with it; this class does the curve arithmetic on {@link BigInteger}s instead, after RFC 8032's reference code
 * (section 6).
 *
 * <p>Not constant time; about 0.4 ms to derive a key and 0.8 ms to sign (a table of the base point's multiples, made
 * once): it runs once per login of an ed25519 account (checking the password a client sent against the stored public
 * key) and once per new server connection of one (signing the server's nonce), never per statement.
 */
public final class Ed25519 {
    private static final BigInteger P = BigInteger.TWO.pow(255).subtract(BigInteger.valueOf(19));
    /** The order of the base point. */
    private static final BigInteger L = BigInteger.TWO.pow(252)
            .add(new BigInteger("27742317777372353535851937790883648493"));
    private static final BigInteger D = BigInteger.valueOf(-121665)
            .multiply(BigInteger.valueOf(121666).modInverse(P)).mod(P);
    private static final BigInteger SQRT_M1 = BigInteger.TWO.modPow(P.subtract(BigInteger.ONE).shiftRight(2), P);
    /** The base point, in extended coordinates (X, Y, Z, T). */
    private static final BigInteger[] BASE;

    /**
     * {@code k * 16^j * BASE} at {@code [j][k]}: a scalar's 64 hexadecimal digits then take at most 64 additions and
     * no doubling (a few thousand {@code BigInteger} products at class loading, about 1 ms per key afterwards).
     */
    private static final BigInteger[][][] BASE_TABLE = new BigInteger[64][16][];

    static {
        BigInteger y = BigInteger.valueOf(4).multiply(BigInteger.valueOf(5).modInverse(P)).mod(P);
        BigInteger x = recoverX(y, 0);
        BASE = new BigInteger[] {x, y, BigInteger.ONE, x.multiply(y).mod(P)};
        BigInteger[] power = BASE;
        for (int j = 0; j < 64; j++) {
            BASE_TABLE[j][1] = power;
            for (int k = 2; k < 16; k++) {
                BASE_TABLE[j][k] = add(BASE_TABLE[j][k - 1], power);
            }
            power = add(BASE_TABLE[j][15], power); // 16 * power
        }
    }

    /** The length of a public key and of each half of a signature. */
    public static final int KEY_LENGTH = 32;

    private Ed25519() {
    }

    /** The public key of {@code secret} (MariaDB: the password), as the server stores it (before base64). */
    public static byte[] publicKey(byte[] secret) {
        byte[] h = sha512(secret);
        try {
            return encode(multiplyBase(clampedScalar(h)));
        } finally {
            Arrays.fill(h, (byte) 0);
        }
    }

    /** The signature of {@code message} with {@code secret}'s key: R (32 bytes) then S (32 bytes). */
    public static byte[] sign(byte[] secret, byte[] message) {
        byte[] h = sha512(secret);
        BigInteger a = clampedScalar(h);
        byte[] publicKey = encode(multiplyBase(a));
        BigInteger r = littleEndian(sha512(Arrays.copyOfRange(h, 32, 64), message)).mod(L);
        Arrays.fill(h, (byte) 0);
        byte[] bigR = encode(multiplyBase(r));
        BigInteger k = littleEndian(sha512(bigR, publicKey, message)).mod(L);
        BigInteger s = r.add(k.multiply(a)).mod(L);
        byte[] signature = Arrays.copyOf(bigR, 2 * KEY_LENGTH);
        System.arraycopy(toLittleEndian(s), 0, signature, KEY_LENGTH, KEY_LENGTH);
        return signature;
    }

    /** The scalar of RFC 8032 5.1.5: the first half of the hash, its low 3 bits and top bit cleared, bit 254 set. */
    private static BigInteger clampedScalar(byte[] h) {
        byte[] half = Arrays.copyOf(h, 32);
        half[0] &= (byte) 248;
        half[31] &= 63;
        half[31] |= 64;
        BigInteger a = littleEndian(half);
        Arrays.fill(half, (byte) 0);
        return a;
    }

    private static BigInteger[] add(BigInteger[] p, BigInteger[] q) {
        BigInteger a = p[1].subtract(p[0]).multiply(q[1].subtract(q[0])).mod(P);
        BigInteger b = p[1].add(p[0]).multiply(q[1].add(q[0])).mod(P);
        BigInteger c = BigInteger.TWO.multiply(p[3]).multiply(q[3]).multiply(D).mod(P);
        BigInteger d = BigInteger.TWO.multiply(p[2]).multiply(q[2]).mod(P);
        BigInteger e = b.subtract(a);
        BigInteger f = d.subtract(c);
        BigInteger g = d.add(c);
        BigInteger h = b.add(a);
        return new BigInteger[] {e.multiply(f).mod(P), g.multiply(h).mod(P), f.multiply(g).mod(P),
                e.multiply(h).mod(P)};
    }

    /** {@code s * BASE} for {@code 0 <= s < 2^256}, one table entry per hexadecimal digit of {@code s}. */
    private static BigInteger[] multiplyBase(BigInteger s) {
        BigInteger[] q = {BigInteger.ZERO, BigInteger.ONE, BigInteger.ONE, BigInteger.ZERO}; // the neutral element
        for (int j = 0; j < 64; j++) {
            int digit = (s.testBit(4 * j) ? 1 : 0) | (s.testBit(4 * j + 1) ? 2 : 0) | (s.testBit(4 * j + 2) ? 4 : 0)
                    | (s.testBit(4 * j + 3) ? 8 : 0);
            if (digit != 0) {
                q = add(q, BASE_TABLE[j][digit]);
            }
        }
        return q;
    }

    /** RFC 8032 5.1.2: y in little-endian, the low bit of x in the top bit. */
    private static byte[] encode(BigInteger[] point) {
        BigInteger zInverse = point[2].modInverse(P);
        BigInteger x = point[0].multiply(zInverse).mod(P);
        BigInteger y = point[1].multiply(zInverse).mod(P);
        byte[] out = toLittleEndian(y);
        out[31] |= (byte) (x.testBit(0) ? 0x80 : 0);
        return out;
    }

    private static BigInteger recoverX(BigInteger y, int sign) {
        BigInteger y2 = y.multiply(y);
        BigInteger x2 = y2.subtract(BigInteger.ONE).multiply(D.multiply(y2).add(BigInteger.ONE).modInverse(P)).mod(P);
        BigInteger x = x2.modPow(P.add(BigInteger.valueOf(3)).shiftRight(3), P);
        if (!x.multiply(x).subtract(x2).mod(P).equals(BigInteger.ZERO)) {
            x = x.multiply(SQRT_M1).mod(P);
        }
        if (x.testBit(0) != (sign == 1)) {
            x = P.subtract(x);
        }
        return x;
    }

    private static BigInteger littleEndian(byte[] bytes) {
        byte[] big = new byte[bytes.length + 1]; // a leading zero: never negative
        for (int i = 0; i < bytes.length; i++) {
            big[bytes.length - i] = bytes[i];
        }
        return new BigInteger(big);
    }

    /** {@code n} (less than 2^256) in 32 bytes, little-endian. */
    private static byte[] toLittleEndian(BigInteger n) {
        byte[] big = n.toByteArray(); // big-endian, maybe with a leading sign byte
        byte[] out = new byte[KEY_LENGTH];
        for (int i = 0; i < Math.min(big.length, KEY_LENGTH); i++) {
            out[i] = big[big.length - 1 - i];
        }
        return out;
    }

    private static byte[] sha512(byte[]... parts) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-512");
            for (byte[] part : parts) {
                digest.update(part);
            }
            return digest.digest();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java has SHA-512", e);
        }
    }
}
