#include "dmasim/config/params.h"

#include <array>

namespace dmasim::config {

double generation_rate_gt(std::int64_t generation) {
    // PCI Express Base Specification: 2.5, 5.0, 8.0, 16.0, 32.0 and 64.0 GT/s per lane.
    static constexpr std::array<double, 6> rates{2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
    if (generation < 1 || generation > static_cast<std::int64_t>(rates.size())) return 0.0;
    return rates[static_cast<std::size_t>(generation - 1)];
}

}  // namespace dmasim::config
