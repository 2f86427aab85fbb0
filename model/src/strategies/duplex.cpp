// duplex: host-to-device and device-to-host at once, of pinned buffers on two streams or of
// pageable ones (synchronous: one after the other).
#include "dmasim/strategies/programs.h"
#include "dmasim/strategies/registry.h"

#include <stdexcept>

namespace dmasim::strategies {

void run_duplex(Engine& engine, Case& c) {
    if (c.ndirs() != 2) throw std::invalid_argument("duplex moves both directions");
    if (c.spec.options.duplex.host_memory == "pinned") {
        run_pinned_copy(engine, c);
    } else {
        run_pageable_copy(engine, c, "pageable copies are synchronous: one direction after the other");
    }
}

}  // namespace dmasim::strategies
