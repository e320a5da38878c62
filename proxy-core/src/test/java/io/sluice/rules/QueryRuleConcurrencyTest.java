package io.sluice.rules;

import io.sluice.config.PoolingConfig;
import io.sluice.testing.SluiceExtension;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code maxConcurrency} rules under transaction pooling ({@link QueryRuleConcurrencyCases}). */
@Tag("server")
class QueryRuleConcurrencyTest extends QueryRuleConcurrencyCases {

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.with(b -> b.pooling(PoolingConfig.transaction()))
            .sluiceOnly("Sluice's own query rules").database("lim_conc_tx_");

    @Override
    SluiceExtension proxy() {
        return proxy;
    }
}
