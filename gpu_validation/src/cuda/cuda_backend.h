// The CUDA backend: measures cases on the GPU(s) of this machine. The header is CUDA-free so
// that main.cpp and tests are plain C++.
#pragma once

#include <memory>
#include <vector>

#include "../runner.h"

namespace dmaprobe {

// Selects the device, reads its properties and PCIe link (idle and under load) and the peer
// matrix. Throws with a clear message when there is no usable CUDA device.
std::unique_ptr<Backend> make_cuda_backend(const Options& opt, const std::vector<CaseDecision>& decisions);

// Number of CUDA devices; 0 (and the reason in *why) when the runtime reports none or fails.
int cuda_device_count(std::string* why = nullptr);

}  // namespace dmaprobe
