package io.sluice.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class JdbcUrlTest {

    @ParameterizedTest(name = "{0}")
    @CsvSource(nullValues = "NULL", value = {
        "jdbc:mysql://127.0.0.1:3306/test,                                      127.0.0.1,   3306,  test",
        "jdbc:mysql://127.0.0.1:3306/test?serverTimezone=UTC&useSSL=false,      127.0.0.1,   3306,  test",
        "jdbc:mariadb://db.example.com:3307/shop,                               db.example.com, 3307, shop",
        "jdbc:mysql://db.example.com/shop,                                      db.example.com, 3306, shop",
        "jdbc:mysql://db.example.com,                                           db.example.com, 3306, NULL",
        "jdbc:mysql://db.example.com/,                                          db.example.com, 3306, NULL",
        "jdbc:mysql://db.example.com:13306,                                     db.example.com, 13306, NULL",
        "jdbc:mysql://db.example.com?useSSL=false,                              db.example.com, 3306, NULL",
        "jdbc:mysql://db.example.com:3306?useSSL=false,                         db.example.com, 3306, NULL",
        "jdbc:mysql://[::1]:3306/test,                                          ::1,         3306,  test",
        "jdbc:mysql://[::1]/test,                                               ::1,         3306,  test",
        "jdbc:mysql://[2001:db8::7]:3310,                                       2001:db8::7, 3310,  NULL",
        "mysql://localhost:3306/test,                                           localhost,   3306,  test",
        "'  jdbc:mysql://localhost:1/test  ',                                   localhost,   1,     test",
        "jdbc:mysql://localhost:65535/test,                                     localhost,   65535, test",
    })
    void parsesHostPortAndDatabase(String url, String host, int port, String database) {
        assertThat(JdbcUrl.parse(url)).isEqualTo(new JdbcUrl(host, port, database));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {
        "localhost:3306/test",
        "jdbc:postgresql://localhost:5432/test",
        "jdbc:mysql:loadbalance://a,b/test",
        "jdbc:mysql://a:3306,b:3306/test",
        "jdbc:mysql://localhost:port/test",
        "jdbc:mysql://localhost:/test",
        "jdbc:mysql://localhost:0/test",
        "jdbc:mysql://localhost:65536/test",
        "jdbc:mysql://:3306/test",
        "jdbc:mysql:///test",
        "jdbc:mysql://[]:3306/test",
    })
    void rejectsBadUrlsNamingTheKeyAndTheUrl(String url) {
        assertThatThrownBy(() -> JdbcUrl.parse(url)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("url: " + url + " (expected: ");
    }

    @org.junit.jupiter.api.Test
    void rejectsNull() {
        assertThatThrownBy(() -> JdbcUrl.parse(null)).isInstanceOf(NullPointerException.class).hasMessage("url");
    }
}
