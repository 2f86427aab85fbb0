// The table of strategies (model/src/strategies/table.cpp): what scenarios may name is exactly
// what the model runs, each once.
#include "dmasim/strategies/strategy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "dmasim/config/scenario.h"
#include "dmasim/sim/simulator.h"

namespace dmasim::strategies {
namespace {

TEST(StrategyTable, EveryStrategyAScenarioMayNameIsRunByOneEntry) {
    std::set<std::string> in_table;
    for (const auto& s : table()) {
        EXPECT_TRUE(in_table.insert(s.name).second) << s.name << " is in the table twice";
        EXPECT_NE(s.run, nullptr) << s.name;
        EXPECT_EQ(find(s.name), &s);
    }
    const auto& names = config::strategy_names();
    EXPECT_EQ(in_table, std::set<std::string>(names.begin(), names.end()))
        << "the scenario reader and the model disagree on the strategies";
    EXPECT_EQ(find("warp_drive"), nullptr);
}

TEST(StrategyTable, TheModelListsTheTableInItsOrder) {
    std::string expected;
    for (const auto& s : table()) expected += (expected.empty() ? "" : ", ") + std::string(s.name);
    EXPECT_EQ(sim::modelled_strategies(), expected);
    EXPECT_TRUE(sim::strategy_modelled("zero_copy"));
    EXPECT_FALSE(sim::strategy_modelled("zero-copy"));
}

}  // namespace
}  // namespace dmasim::strategies
