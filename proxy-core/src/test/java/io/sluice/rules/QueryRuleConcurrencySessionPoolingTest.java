package io.sluice.rules;

import io.sluice.config.PoolingConfig;
import io.sluice.testing.SluiceExtension;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code maxConcurrency} rules under session pooling ({@link QueryRuleConcurrencyCases}). */
@Tag("server")
class QueryRuleConcurrencySessionPoolingTest extends QueryRuleConcurrencyCases {

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.with(b -> b.pooling(PoolingConfig.defaults()))
            .sluiceOnly("Sluice's own query rules").database("lim_conc_ses_");

    @Override
    SluiceExtension proxy() {
        return proxy;
    }
}
