#include "dmasim/sim/memory.h"

#include <algorithm>

#include "dmasim/sim/tlp.h"

namespace dmasim::sim {

MemoryController::MemoryController(sc_core::sc_module_name name, const Params& params)
    : sc_core::sc_module(name), socket("socket"), params_(params) {
    socket.register_b_transport(this, &MemoryController::b_transport);
    configure(params);
}

void MemoryController::configure(const Params& params) {
    params_ = params;
    ps_per_byte_ = 1e12 / params_.bandwidth.bytes_per_s;
    // Configured between cases, with the model at rest and the case clock at zero.
    busy_until_ps_ = 0.0;
    streaming_ = 0;
    stats_ = MemoryStats{};
}

void MemoryController::b_transport(int /*requester*/, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    delay = sc_core::sc_time::from_value(
        static_cast<sc_dt::uint64>(serve(gp.is_write(), gp.get_data_length(), static_cast<double>(delay.value()))));
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

double MemoryController::serve(bool write, std::uint64_t bytes, double offset_ps, double latency_ps) {
    const double arrive = now_ps() + offset_ps;
    const double start = std::max(arrive, busy_until_ps_);
    const double service = static_cast<double>(bytes) * ps_per_byte_;
    // Its turn comes after as much of every streaming kernel's (their share of the rate).
    const double shared = service * static_cast<double>(1 + streaming_);
    busy_until_ps_ = start + shared;
    stats_.busy_ps += shared;
    if (write) {
        stats_.writes++;
        stats_.bytes_written += bytes;
    } else {
        stats_.reads++;
        stats_.bytes_read += bytes;
    }
    const double latency = latency_ps >= 0.0 ? latency_ps : static_cast<double>(params_.latency.ps);
    return offset_ps + static_cast<double>(delay_ps(busy_until_ps_ - arrive + latency));
}

MemoryPort::MemoryPort(const char* name) : socket(name) {}

void MemoryPort::bind(MemoryController& controller) {
    socket.bind(controller.socket);
    controller_ = &controller;
}

}  // namespace dmasim::sim
