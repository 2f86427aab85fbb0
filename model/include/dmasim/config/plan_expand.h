// Expands scenarios into the flat plan the CUDA harness runs (docs/plan.md).
#pragma once

#include <vector>

#include "dmasim/config/scenario.h"
#include "dmasim/core/plan.h"

namespace dmasim::config {

// One case per (scenario, strategy, direction, size, variant). Cases no GPU machine can run
// carry `hw_skip` with the reason; the harness reports them as skipped rows.
core::Plan expand_plan(const std::vector<Scenario>& scenarios);

}  // namespace dmasim::config
