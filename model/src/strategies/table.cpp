// The one table of strategies: a new strategy is a file and a line here.
#include "dmasim/strategies/registry.h"

#include <algorithm>

namespace dmasim::strategies {

const std::vector<Strategy>& table() {
    static const std::vector<Strategy> all{
        // A blocking copy each way: its call and its wait (a small host-to-device copy's CPU
        // copy into the command stream is not counted, but no row that small passes the bound).
        {"pinned", run_pinned, 4},
        {"duplex", run_duplex},
        {"pageable", run_pageable},
        {"registered", run_registered},
        {"async_overlap", run_async_overlap},
        {"periodic", run_periodic},
        // The kernel's launch call, its launch and the synchronisation.
        {"zero_copy", run_zero_copy, 3},
        {"peer", run_peer},
        {"third_party_dma", run_third_party_dma},
        {"cpu_mapped", run_cpu_mapped},
    };
    return all;
}

const Strategy* find(const std::string& name) {
    const auto& all = table();
    const auto it = std::find_if(all.begin(), all.end(), [&](const Strategy& s) { return name == s.name; });
    return it == all.end() ? nullptr : &*it;
}

}  // namespace dmasim::strategies
