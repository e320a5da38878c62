package io.sluice.rules;

import io.sluice.testing.SluiceExtension;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code block} rules under session pooling (the default). */
@Tag("server")
class QueryRuleBlockTest extends QueryRuleBlockCases {

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.withDefaults().sluiceOnly("Sluice's own query rules")
            .database("rules_blk_", SETUP_TABLE, SETUP_ROWS);

    @Override
    SluiceExtension proxy() {
        return proxy;
    }
}
