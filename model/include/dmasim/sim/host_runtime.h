// The CPU side of a copy: the CUDA runtime call, the doorbell to a copy engine, and the
// polling for the engine's completion semaphore. One SC_THREAD runs one case at a time and
// pauses the kernel between cases, so a process elaborates once and runs a whole sweep.
#pragma once

#include <systemc>

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "dmasim/config/params.h"
#include "dmasim/sim/dma_engine.h"
#include "dmasim/sim/gpu.h"
#include "dmasim/sim/root_complex.h"

namespace dmasim::sim {

// One timed transfer as the runtime sees it: the copies issued back to back (each after its
// own call overhead), then a wait until all have completed.
struct CopyRequest {
    struct Copy {
        CopyDirection direction;
        std::uint64_t bytes;
        int engine;  // copies on the same engine run one after the other
    };
    std::vector<Copy> copies;
};

class HostRuntime : public sc_core::sc_module, public CompletionListener {
public:
    SC_HAS_PROCESS(HostRuntime);
    using Params = config::RuntimeParams;

    HostRuntime(sc_core::sc_module_name name, const Params& params, Gpu& gpu, std::uint16_t host_node);

    void configure(const Params& params);
    // Called outside the simulation: hands over the next request; sc_start() runs it.
    void submit(const CopyRequest& request);
    bool done() const { return done_; }
    double elapsed_ps() const { return elapsed_ps_; }

    void semaphore_written(std::uint32_t job) override;

private:
    void driver();  // SC_THREAD
    void start_next_on(int engine);

    Params params_;
    Gpu& gpu_;
    std::uint16_t host_node_;
    CopyRequest request_;
    bool has_request_ = false;
    bool done_ = false;
    double elapsed_ps_ = 0.0;
    std::uint32_t next_job_id_ = 1;
    std::uint32_t first_job_id_ = 0;
    std::size_t completed_ = 0;
    std::vector<std::deque<CopyJob>> engine_queue_;
    std::vector<bool> engine_busy_;
    std::vector<int> job_engine_;
    sc_core::sc_event work_event_;
    sc_core::sc_event all_done_event_;
};

}  // namespace dmasim::sim
