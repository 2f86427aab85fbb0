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
    stats_ = MemoryStats{};
}

void MemoryController::b_transport(int /*requester*/, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const double arrive = now_ps() + static_cast<double>(delay.value());
    const double start = std::max(arrive, busy_until_ps_);
    const double service = static_cast<double>(gp.get_data_length()) * ps_per_byte_;
    busy_until_ps_ = start + service;
    stats_.busy_ps += service;
    if (gp.is_write()) {
        stats_.writes++;
        stats_.bytes_written += gp.get_data_length();
    } else {
        stats_.reads++;
        stats_.bytes_read += gp.get_data_length();
    }
    delay += ps_delay(busy_until_ps_ - arrive + static_cast<double>(params_.latency.ps));
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

MemoryPort::MemoryPort(const char* name) : socket(name) {
    // Timing only: the model moves no data, so the payload has no data pointer. What never
    // changes between accesses is set once here; access() sets the rest.
    gp_.set_address(0);
    gp_.set_data_ptr(nullptr);
    gp_.set_byte_enable_ptr(nullptr);
    gp_.set_dmi_allowed(false);
}

sc_core::sc_time MemoryPort::access(bool write, std::uint64_t bytes, const sc_core::sc_time& offset) {
    gp_.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    gp_.set_data_length(static_cast<unsigned int>(bytes));
    gp_.set_streaming_width(static_cast<unsigned int>(bytes));
    gp_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time delay = offset;
    socket->b_transport(gp_, delay);
    DMASIM_ASSERT(gp_.is_response_ok());
    return delay;
}

}  // namespace dmasim::sim
