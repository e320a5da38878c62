package io.sluice.auth;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Digests checked against glibc's crypt(3) ({@code $5$rounds=N$salt$}) and the specification's own example. */
class Sha256CryptTest {

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        // password | salt | rounds | digest
        "Hello world! | saltstring | 5000 | 5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5",
        "Hello world! | saltstringsaltst | 10000 | 3xv.VbSHBb41AL9AvLeujZkZRBAwqFMz2.opqey6IcA",
        "secret | abcdefghijklmnop | 5000 | i7zHaTeYqXlesRXJ8dXj6o.MEFQdzfIJpJpcWAtszs6",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa | xy | 5000 | i4xef.0DVRNY9eMsNJcn71dourSDBye.ZBFAttp7NN7",
        "pässwörd | ABCDEFGHIJKLMNOP | 5000 | 4nOyGN6fvDnc0HLyOi3WOBXweXpxWd/N/Z7zlko7WwD",
        "'' | 0123456789ABCDEF | 5000 | 2uaA7kdIqnF6Rfzm691bP2ob0tAzcxXQp1CouLhKlA6",
    })
    void matchesCrypt3(String password, String salt, int rounds, String digest) {
        assertThat(Sha256Crypt.digest(password.getBytes(StandardCharsets.UTF_8),
                salt.getBytes(StandardCharsets.US_ASCII), rounds)).isEqualTo(digest);
    }
}
