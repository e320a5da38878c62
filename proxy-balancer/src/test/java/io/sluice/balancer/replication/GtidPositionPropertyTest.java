package io.sluice.balancer.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** "At or past" is a partial order, the union is its least upper bound, and the text round-trips. */
class GtidPositionPropertyTest {

    private static final List<String> UUIDS = List.of("3e11fa47-71ca-11e1-9e33-c80aa9429562",
            "5d2f1c3e-0000-11e1-9e33-c80aa9429562", "00000000-0000-0000-0000-000000000001");

    @Property
    void mariaDbOrder(@ForAll("mariaDb") MariaDbGtidPosition a, @ForAll("mariaDb") MariaDbGtidPosition b,
            @ForAll("mariaDb") MariaDbGtidPosition c) {
        checkOrder(a, b, c);
        assertThat(MariaDbGtidPosition.parse(a.toString())).isEqualTo(a);
    }

    @Property
    void mySqlOrder(@ForAll("mySql") MySqlGtidSet a, @ForAll("mySql") MySqlGtidSet b,
            @ForAll("mySql") MySqlGtidSet c) {
        checkOrder(a, b, c);
        assertThat(MySqlGtidSet.parse(a.toString())).isEqualTo(a);
    }

    private static void checkOrder(GtidPosition a, GtidPosition b, GtidPosition c) {
        assertThat(a.isAtOrPast(a)).isTrue();
        GtidPosition union = a.union(b);
        assertThat(union.isAtOrPast(a)).isTrue();
        assertThat(union.isAtOrPast(b)).isTrue();
        assertThat(a.isAtOrPast(b)).isEqualTo(a.transactionsBehind(b) == 0);
        if (a.isAtOrPast(b) && b.isAtOrPast(c)) {
            assertThat(a.isAtOrPast(c)).isTrue();
        }
        if (c.isAtOrPast(a) && c.isAtOrPast(b)) {
            assertThat(c.isAtOrPast(union)).isTrue();
        }
        assertThat(a.isAtOrPast(a.union(b).union(c))).isEqualTo(a.isAtOrPast(b) && a.isAtOrPast(c));
    }

    @Provide
    Arbitrary<MariaDbGtidPosition> mariaDb() {
        Arbitrary<String> gtid = Combinators.combine(Arbitraries.longs().between(0, 3),
                Arbitraries.longs().between(1, 3), Arbitraries.longs().between(1, 30))
                .as((domain, server, sequence) -> domain + "-" + server + "-" + sequence);
        return gtid.list().ofMaxSize(4).map(list -> MariaDbGtidPosition.parse(String.join(",", list)));
    }

    @Provide
    Arbitrary<MySqlGtidSet> mySql() {
        Arbitrary<String> member = Combinators.combine(Arbitraries.of(UUIDS), Arbitraries.longs().between(1, 20),
                Arbitraries.longs().between(0, 5))
                .as((uuid, start, length) -> uuid + ":" + start + (length == 0 ? "" : "-" + (start + length)));
        return member.list().ofMaxSize(5).map(list -> MySqlGtidSet.parse(String.join(",", list)));
    }
}
