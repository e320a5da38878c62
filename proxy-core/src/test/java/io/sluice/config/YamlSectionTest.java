package io.sluice.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** YamlSection on real YAML text, composed by the same code that reads config.yaml. */
class YamlSectionTest {

    private static YamlSection document(String yaml) {
        return ConfigYaml.document(yaml, "test.yaml");
    }

    /** Reads {@code server: {port: ...}} and nothing else. */
    private static int port(YamlSection top) {
        int port = top.section("server", -1, server -> {
            int value = server.integer("port", 0);
            server.done();
            return value;
        });
        top.done();
        return port;
    }

    @Test
    void readsTheKeysAskedFor() {
        assertThat(port(document("server:\n  port: 3307\n"))).isEqualTo(3307);
        assertThat(port(document("server:\n"))).as("a section with no value is absent").isEqualTo(-1);
    }

    @Test
    void refusesAKeyNoGetterAskedForWithItsPathAndLine() {
        assertThatThrownBy(() -> port(document("""
                server:
                  port: 3307
                  prot: 3308
                """))).isInstanceOf(ConfigException.class)
                .hasMessage("test.yaml line 3: server.prot: unknown key (expected: one of port)");
        assertThatThrownBy(() -> port(document("server: {}\nclient: {}\n")))
                .hasMessage("test.yaml line 2: client: unknown key (expected: one of server)");
    }

    @Test
    void theKeysAcceptedAreTheKeysAskedForAbsentOrNot() {
        YamlSection top = document("b: 2\n");
        top.string("a", null);
        top.string("b", null);
        top.string("c", null);
        top.done();

        YamlSection misspelt = document("d: 4\n");
        misspelt.string("a", null);
        misspelt.string("c", null);
        assertThatThrownBy(misspelt::done)
                .hasMessage("test.yaml line 1: d: unknown key (expected: one of a, c)");
    }

    @Test
    void aTypedGetterRefusesAWrongTypeWithPathAndLine() {
        assertThatThrownBy(() -> port(document("""
                server:
                  port: ten
                """))).isInstanceOf(ConfigException.class)
                .hasMessage("test.yaml line 2: server.port: \"ten\" (expected: an integer)");

        YamlSection top = document("a: [1]\nb: \"true\"\nc: maybe\n");
        assertThat(top.string("a", "absent")).as("answers as if absent").isEqualTo("absent");
        assertThat(top.flag("b", false)).isFalse();
        assertThat(top.oneOf("c", Transport.class, Transport.AUTO)).isEqualTo(Transport.AUTO);
        assertThatThrownBy(top::done).as("the first refusal in read order")
                .hasMessage("test.yaml line 1: a: a list (expected: a string)");
    }

    @Test
    void anIgnoredKeyIsAcceptedWithAnyValue() {
        YamlSection top = document("""
                users: []
                privilege:
                  type: ALL_PERMITTED
                """);
        assertThat(top.list("users", "a list", item -> item)).isEmpty();
        top.ignore("privilege");
        top.done();
    }

    @Test
    void anUnknownKeyIsReportedBeforeTheValuesItsMisspellingLeavesOut() {
        YamlSection top = document("""
                urll: jdbc:mysql://h/d
                port: ten
                """);
        top.requiredString("url", "a JDBC URL");
        top.integer("port", 0);
        assertThatThrownBy(top::done).hasMessage("test.yaml line 1: urll: unknown key (expected: one of url, port)");
    }

    @Test
    void aParentsUnknownKeyIsReportedBeforeARefusalInsideItsSections() {
        assertThatThrownBy(() -> port(document("""
                server:
                  port: ten
                serve: {}
                """))).hasMessage("test.yaml line 3: serve: unknown key (expected: one of server)");
    }

    @Test
    void refusesAMissingRequiredValueAtTheSectionOrTheEmptyValue() {
        YamlSection absent = document("a: 1\n");
        absent.integer("a", 0);
        assertThat(absent.requiredString("name", "a name")).isNull();
        assertThatThrownBy(absent::done).hasMessage("test.yaml line 1: name: missing (expected: a name)");

        YamlSection blank = document("a: 1\nname: ' '\n");
        blank.integer("a", 0);
        blank.requiredString("name", "a name");
        assertThatThrownBy(blank::done).hasMessage("test.yaml line 2: name: missing (expected: a name)");
    }

    @Test
    void refusesASectionThatIsNotAMappingNamingTheKeysRead() {
        assertThatThrownBy(() -> port(document("server: 3307\n")))
                .hasMessage("test.yaml line 1: server: 3307 (expected: a mapping of port)");
        assertThatThrownBy(() -> port(document("- a list\n")))
                .hasMessage("test.yaml line 1: (top level): a list (expected: a mapping of server)");
    }

    @Test
    void refusesAKeyWrittenTwiceNamingBothLines() {
        assertThatThrownBy(() -> port(document("""
                server:
                  port: 1
                  port: 2
                """))).hasMessage("test.yaml line 3: server.port: duplicate key (first at line 2)");
    }

    @Test
    void readsNamedSectionsInFileOrderAndANameWithNoValueAsAnEmptySection() {
        YamlSection top = document("""
                dataSources:
                  b: {url: x}
                  a:
                """);
        Map<String, String> urls = top.namedSections("dataSources", "a mapping of names", (name, section) -> {
            String url = section.string("url", "none");
            section.done();
            return url;
        });
        top.done();
        assertThat(List.copyOf(urls.entrySet())).containsExactly(Map.entry("b", "x"), Map.entry("a", "none"));
    }

    @Test
    void namesListItemsByIndex() {
        YamlSection top = document("""
                users:
                  - user: a
                  - usr: b
                """);
        top.list("users", "a list", item -> {
            item.string("user", null);
            item.done();
            return item;
        });
        assertThatThrownBy(top::done)
                .hasMessage("test.yaml line 3: users[1].usr: unknown key (expected: one of user)");
    }

    @Test
    void aRecordsOwnRefusalIsReportedAtTheKeyItNames() {
        YamlSection top = document("""
                server:
                  address: h
                  port: 70000
                """);
        AdminConfig admin = top.section("server", null, server -> {
            String address = server.string("address", null);
            int port = server.integer("port", 0);
            return server.done(() -> new AdminConfig(true, address, port, null));
        });
        assertThat(admin).as("refused, and answered as absent until done()").isNull();
        assertThatThrownBy(top::done).hasMessage("test.yaml line 3: server.port: 70000 (expected: 0..65535)");
    }

    @Test
    void aReaderThatForgetsDoneIsAMistakeInSluiceNotInTheFile() {
        YamlSection top = document("server: {port: 1}\n");
        assertThatThrownBy(() -> top.section("server", 0, server -> server.integer("port", 0)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("server");
    }
}
