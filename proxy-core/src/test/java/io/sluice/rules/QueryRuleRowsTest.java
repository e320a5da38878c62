package io.sluice.rules;

import io.sluice.config.PoolingConfig;
import io.sluice.testing.SluiceExtension;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code maxRows} rules under transaction pooling ({@link QueryRuleRowsCases}). */
@Tag("server")
class QueryRuleRowsTest extends QueryRuleRowsCases {

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.with(b -> b.pooling(PoolingConfig.transaction()))
            .sluiceOnly("Sluice's own query rules").database("rows_tx_");

    @Override
    SluiceExtension proxy() {
        return proxy;
    }
}
