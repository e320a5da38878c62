package io.sluice.readwrite;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A transaction runs whole where it began; autocommit off keeps everything on the primary. */
class TransactionStateTest {

    private final TransactionState state = new TransactionState(true);

    private List<String> route(String... statements) {
        List<String> labels = new ArrayList<>();
        for (String sql : statements) {
            labels.add(state.route(StatementClassifier.classify(sql)).label());
        }
        return labels;
    }

    @Test
    void aReadWriteTransactionRunsOnThePrimary() {
        assertThat(route("SELECT 1", "BEGIN", "SELECT 1", "INSERT INTO t VALUES (1)", "SHOW WARNINGS", "COMMIT",
                "SELECT 1")).containsExactly("replica", "primary:transaction", "primary:in_transaction",
                "primary:in_transaction", "previous:diagnostics", "primary:in_transaction", "replica");
    }

    @Test
    void aReadOnlyTransactionRunsOnAReplica() {
        assertThat(route("START TRANSACTION READ ONLY", "SELECT 1", "SELECT * FROM t FOR UPDATE", "COMMIT",
                "SELECT 1")).containsExactly("replica:read_only_transaction", "replica:read_only_transaction",
                "replica:read_only_transaction", "replica:read_only_transaction", "replica");
        assertThat(state.inTransaction()).isFalse();
    }

    @Test
    void readOnlyTransactionsStayOnThePrimaryWhenConfiguredSo() {
        TransactionState primaryOnly = new TransactionState(false);
        assertThat(primaryOnly.route(StatementClassifier.classify("START TRANSACTION READ ONLY")))
                .isEqualTo(RouteReason.TRANSACTION);
        assertThat(primaryOnly.route(StatementClassifier.classify("SELECT 1"))).isEqualTo(RouteReason.IN_TRANSACTION);
    }

    @Test
    void autocommitOffKeepsEveryStatementOnThePrimary() {
        assertThat(route("SET autocommit = 0", "SELECT 1", "COMMIT", "SELECT 1", "SET autocommit = 1", "SELECT 1"))
                .containsExactly("primary:set", "primary:in_transaction", "primary:in_transaction",
                        "primary:in_transaction", "primary:in_transaction", "replica");
    }

    @Test
    void ddlCommitsImplicitly() {
        assertThat(route("BEGIN", "CREATE TABLE t (a INT)", "SELECT 1"))
                .containsExactly("primary:transaction", "primary:in_transaction", "replica");
    }

    @Test
    void theServersStatusCorrectsTheText() {
        route("BEGIN");
        state.onServerStatus(0x0002); // the BEGIN failed: autocommit, no transaction
        assertThat(route("SELECT 1")).containsExactly("replica");
        state.onServerStatus(0x0001); // a procedure turned autocommit off and began one
        assertThat(route("SELECT 1")).containsExactly("primary:in_transaction");
        state.reset();
        assertThat(route("SELECT 1")).containsExactly("replica");
    }

    @Test
    void aTransactionBegunWhileTheSessionIsReadOnlyRunsOnAReplica() {
        state.sessionReadOnly(true); // SET SESSION TRANSACTION READ ONLY, JDBC's setReadOnly(true)
        assertThat(route("BEGIN", "SELECT 1", "COMMIT", "START TRANSACTION READ WRITE", "SELECT 1", "COMMIT",
                "XA START 'x'")).containsExactly("replica:read_only_transaction", "replica:read_only_transaction",
                "replica:read_only_transaction", "primary:transaction", "primary:in_transaction",
                "primary:in_transaction", "primary:pinning");
        state.reset();
        state.sessionReadOnly(false);
        assertThat(route("BEGIN", "SELECT 1")).containsExactly("primary:transaction", "primary:in_transaction");
    }

    @Test
    void withAutocommitOffAReadOnlySessionsReadsOpenReadOnlyTransactionsAndItsWritesStayOnThePrimary() {
        state.sessionReadOnly(true);
        assertThat(route("SET autocommit = 0", "SELECT 1", "SELECT 2", "COMMIT", "INSERT INTO t VALUES (1)",
                "COMMIT")).containsExactly("primary:set", "replica:read_only_transaction",
                "replica:read_only_transaction", "replica:read_only_transaction", "primary:in_transaction",
                "primary:in_transaction");
        state.sessionReadOnly(false); // setReadOnly(false)
        assertThat(route("SELECT 1")).containsExactly("primary:in_transaction");
    }

    @Test
    void aReadOnlySessionFollowsTheStrategyPrimary() {
        TransactionState primaryOnly = new TransactionState(false);
        primaryOnly.sessionReadOnly(true);
        assertThat(primaryOnly.route(StatementClassifier.classify("BEGIN"))).isEqualTo(RouteReason.TRANSACTION);
        assertThat(primaryOnly.route(StatementClassifier.classify("SELECT 1"))).isEqualTo(RouteReason.IN_TRANSACTION);
    }
}
