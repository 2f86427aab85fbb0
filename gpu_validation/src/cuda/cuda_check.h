// Checks every CUDA call: on failure, throws CudaError naming file:line, the call as written,
// and the error's name and text. Kernel launches are checked with CUDA_CHECK_LAUNCH
// (cudaGetLastError right after the launch).
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace dmaprobe {

class CudaError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_cuda_error(cudaError_t e, const char* call, const char* file, int line);

inline void cuda_check(cudaError_t e, const char* call, const char* file, int line) {
    if (e != cudaSuccess) throw_cuda_error(e, call, file, line);
}

}  // namespace dmaprobe

#define CUDA_CHECK(call) ::dmaprobe::cuda_check((call), #call, __FILE__, __LINE__)
#define CUDA_CHECK_LAUNCH(kernel_name) \
    ::dmaprobe::cuda_check(cudaGetLastError(), "launch of " kernel_name, __FILE__, __LINE__)
