// PCIe wire arithmetic from the PCI Express Base Specification: signalling rate, line encoding,
// ordered-set overhead, and the bytes each TLP and DLLP occupies on a link. None of this is
// fitted: it is the physics the calibration must leave alone.
#pragma once

#include <cstdint>
#include <string>

#include "dmasim/config/params.h"

namespace dmasim::pcie {

enum class Encoding { k8b10b, k128b130b, kFlit };
enum class TlpKind : std::uint8_t { kMemWrite, kMemRead, kCompletion };

// Fixed, spec-given properties of one generation's physical and data link layers.
struct GenerationSpec {
    double gt_per_s;            // per-lane signalling rate
    Encoding encoding;
    double encoding_efficiency;  // payload bits per line bit (8/10, 128/130, 1 for Flit mode)
    double skp_efficiency;       // share of symbol time left after SKP ordered sets
    double flit_efficiency;      // Flit mode: TLP bytes per flit byte (236/256); 1 otherwise
    std::uint32_t tlp_framing;   // framing + sequence number + LCRC bytes per TLP (0 in Flit mode)
    std::uint32_t dllp_bytes;    // wire bytes per DLLP (0 in Flit mode: DLLPs ride in the flit's DLP bytes)
};
GenerationSpec generation_spec(std::int64_t generation);

// Everything a link direction needs to turn bytes into time.
struct LinkPhysics {
    GenerationSpec spec;
    std::int64_t lanes;
    double gt_per_s;
    // Bytes of TLP/DLLP stream per second once encoding, SKP and flit overheads are paid.
    double stream_bytes_per_s;
    double ps_per_byte;
};
LinkPhysics link_physics(const config::LinkParams& link);

// TLP header bytes: memory requests are 3DW or 4DW (64-bit address), completions 3DW.
std::uint32_t header_bytes(TlpKind kind, const config::LinkParams& link);
// Bytes one TLP occupies in the link's byte stream: framing + header + payload + ECRC.
std::uint32_t tlp_wire_bytes(TlpKind kind, std::uint32_t payload, const config::LinkParams& link);
std::uint32_t dllp_wire_bytes(const config::LinkParams& link);

// Flow-control data credits for a payload (one credit = 16 bytes, spec).
inline constexpr std::uint32_t kCreditBytes = 16;
inline std::uint32_t data_credits(std::uint32_t payload) { return (payload + kCreditBytes - 1) / kCreditBytes; }

// Analytical bounds the simulated result must approach for long copies on an uncontended link.
struct Efficiency {
    double payload_fraction;  // payload / (payload + per-TLP overhead [+ amortised DLLPs])
    double gbps;              // payload GB/s (decimal) at that fraction
};
// Posted writes of MPS bytes (device to host): data link share of the link carrying them.
Efficiency write_efficiency(const config::LinkParams& link, std::uint32_t payload);
// Read completions of `completion` bytes (host to device) on the link carrying them.
Efficiency completion_efficiency(const config::LinkParams& link, std::uint32_t completion);
// Raw link data rate after encoding and SKP, GB/s (decimal): "x16 Gen5 = 63.0 GB/s".
double raw_gbps(const config::LinkParams& link);
std::string describe_link(const config::LinkParams& link);  // "Gen5 x16 (32 GT/s, 128b/130b)"

}  // namespace dmasim::pcie
