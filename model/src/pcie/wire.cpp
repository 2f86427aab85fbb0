#include "dmasim/pcie/wire.h"

#include <stdexcept>

namespace dmasim::pcie {

namespace {
// SKP ordered sets (spec): 8b/10b links insert a 4-symbol SKP OS every 1180..1538 symbol
// times; 128b/130b links one SKP block every 370..375 blocks; Flit mode every 740..752 blocks.
// The lower bound of each interval is used: the densest insertion a compliant port may make.
constexpr double kSkp8b10b = 1180.0 / (1180.0 + 4.0);
constexpr double kSkp128b130b = 370.0 / (370.0 + 1.0);
constexpr double kSkpFlit = 740.0 / (740.0 + 1.0);
// Flit mode (Gen6): 256-byte flits carry 236 TLP bytes, 6 DLP bytes, 8 CRC and 6 FEC bytes.
constexpr double kFlitTlpShare = 236.0 / 256.0;
// 8b/10b framing: STP(1) + sequence number(2) + LCRC(4) + END(1); DLLP: SDP(1) + 6 + END(1).
constexpr std::uint32_t kFraming8b10b = 8;
// 128b/130b framing: STP token(4, carries the sequence number) + LCRC(4); DLLP: SDP(2) + 6.
constexpr std::uint32_t kFraming128b130b = 8;
constexpr std::uint32_t kDllp = 8;
constexpr std::uint32_t kEcrc = 4;
constexpr std::uint32_t kDw = 4;
}  // namespace

GenerationSpec generation_spec(std::int64_t generation) {
    const double rate = config::generation_rate_gt(generation);
    switch (generation) {
        case 1:
        case 2:
            return GenerationSpec{rate, Encoding::k8b10b, 8.0 / 10.0, kSkp8b10b, 1.0, kFraming8b10b, kDllp};
        case 3:
        case 4:
        case 5:
            return GenerationSpec{rate, Encoding::k128b130b, 128.0 / 130.0, kSkp128b130b, 1.0, kFraming128b130b, kDllp};
        case 6:
            return GenerationSpec{rate, Encoding::kFlit, 1.0, kSkpFlit, kFlitTlpShare, 0, 0};
        default:
            throw std::invalid_argument("PCIe generation " + std::to_string(generation) + " does not exist (1..6)");
    }
}

LinkPhysics link_physics(const config::LinkParams& link) {
    LinkPhysics p{};
    p.spec = generation_spec(link.generation);
    p.lanes = link.lanes;
    p.gt_per_s = link.rate.gt_per_s > 0 ? link.rate.gt_per_s : p.spec.gt_per_s;
    const double line_bits_per_s = p.gt_per_s * 1e9 * static_cast<double>(link.lanes);
    p.stream_bytes_per_s =
        line_bits_per_s / 8.0 * p.spec.encoding_efficiency * p.spec.skp_efficiency * p.spec.flit_efficiency;
    p.ps_per_byte = 1e12 / p.stream_bytes_per_s;
    return p;
}

std::uint32_t header_bytes(TlpKind kind, const config::LinkParams& link) {
    if (kind == TlpKind::kCompletion) return 3 * kDw;
    return (link.addr64 ? 4 : 3) * kDw;
}

std::uint32_t tlp_wire_bytes(TlpKind kind, std::uint32_t payload, const config::LinkParams& link) {
    const GenerationSpec spec = generation_spec(link.generation);
    return spec.tlp_framing + header_bytes(kind, link) + payload + (link.ecrc ? kEcrc : 0);
}

std::uint32_t dllp_wire_bytes(const config::LinkParams& link) { return generation_spec(link.generation).dllp_bytes; }

double raw_gbps(const config::LinkParams& link) { return link_physics(link).stream_bytes_per_s * 1e-9; }

namespace {
Efficiency efficiency(const config::LinkParams& link, TlpKind kind, std::uint32_t payload) {
    const double wire = tlp_wire_bytes(kind, payload, link);
    const double frac = static_cast<double>(payload) / wire;
    return Efficiency{frac, frac * raw_gbps(link)};
}
}  // namespace

Efficiency write_efficiency(const config::LinkParams& link, std::uint32_t payload) {
    return efficiency(link, TlpKind::kMemWrite, payload);
}

Efficiency completion_efficiency(const config::LinkParams& link, std::uint32_t completion) {
    return efficiency(link, TlpKind::kCompletion, completion);
}

std::string describe_link(const config::LinkParams& link) {
    const LinkPhysics p = link_physics(link);
    const char* enc = p.spec.encoding == Encoding::k8b10b      ? "8b/10b"
                      : p.spec.encoding == Encoding::k128b130b ? "128b/130b"
                                                               : "Flit";
    char buf[128];
    std::snprintf(buf, sizeof buf, "Gen%lld x%lld (%g GT/s, %s)", static_cast<long long>(link.generation),
                  static_cast<long long>(link.lanes), p.gt_per_s, enc);
    return buf;
}

}  // namespace dmasim::pcie
