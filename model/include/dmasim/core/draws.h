// Random draws that repeat on every standard library: std::mt19937_64's output is fixed by the
// standard, its distributions are not, so uniforms and normals are made here. For the model's
// stochastic parts (frame jitter) and the fits that simulate them; never in the TLP hot path.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>

namespace dmasim::core {

class Draws {
public:
    explicit Draws(std::uint64_t seed) : gen_(seed) {}
    // [0, 1), 53 bits.
    double uniform() { return static_cast<double>(gen_() >> 11) * 0x1.0p-53; }
    // N(0, 1): Box-Muller, one of the pair (u1 in (0, 1]).
    double normal() {
        constexpr double kTwoPi = 6.283185307179586;
        const double u1 = 1.0 - uniform();
        const double u2 = uniform();
        return std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
    }

private:
    std::mt19937_64 gen_;
};

// FNV-1a of a text: a case's own seed from its label.
inline std::uint64_t fnv1a(const std::string& text) {
    std::uint64_t h = 14695981039346656037ULL;
    for (const unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ULL;
    }
    return h;
}

}  // namespace dmasim::core
