package io.sluice.rules;

import io.sluice.config.PoolingConfig;
import io.sluice.testing.SluiceExtension;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code maxRows} rules under session pooling ({@link QueryRuleRowsCases}). */
@Tag("server")
class QueryRuleRowsSessionPoolingTest extends QueryRuleRowsCases {

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.with(b -> b.pooling(PoolingConfig.defaults()))
            .sluiceOnly("Sluice's own query rules").database("rows_ses_");

    @Override
    SluiceExtension proxy() {
        return proxy;
    }
}
