package io.sluice.rules;

import io.sluice.config.PoolingConfig;
import io.sluice.testing.SluiceExtension;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code block} rules under transaction pooling, where prepared statements are mapped to each connection's own
 * ids: the rule still finds an execution's SQL by the client's id.
 */
@Tag("server")
class QueryRuleBlockTransactionPoolingTest extends QueryRuleBlockCases {

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.with(b -> b.pooling(PoolingConfig.transaction()))
            .sluiceOnly("Sluice's own query rules").database("rules_blt_", SETUP_TABLE, SETUP_ROWS);

    @Override
    SluiceExtension proxy() {
        return proxy;
    }
}
