// --json FILE: the results as a document shaped like the -j/--json output of NVIDIA's
// nvbandwidth, so that tools that read nvbandwidth's JSON (and people who know it) can read
// dmaprobe's: a top-level "nvbandwidth" object with version, CUDA/driver versions, the GPU
// list and a "testcases" array, one entry per measured.csv row, carrying a one-row value
// matrix as nvbandwidth does. docs/harness.md lists the keys. Plain C++.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "dmasim/core/results.h"
#include "metadata.h"
#include "spec.h"

namespace dmaprobe {

// "scenario/strategy/direction/size_bytes" and "/variant" when the row has one: unique per row
// (the results schema's key), e.g. "smoke-pinned/pinned/h2d/67108864/setup=mallochost".
std::string testcase_name(const dmasim::core::ResultRow& r);

// True for rows whose time is a latency or a duration rather than a transfer of size_bytes:
// periodic rows, setup=... rows (allocation, registration) and async_overlap's kernel row.
// They get latency_* keys (microseconds) instead of bandwidth_* keys (GB/s).
bool is_latency_row(const dmasim::core::ResultRow& r);

// The document. rows[i] belongs to the case with plan index row_case[i] (RunSummary);
// `decisions` give each case's GPUs (peer: source and destination); `m` the versions, GPUs and
// host (after the backend described itself). Rows whose case is not found are still written,
// on the measured GPU.
std::string nvbandwidth_json(const std::vector<dmasim::core::ResultRow>& rows,
                             const std::vector<std::size_t>& row_case, const std::vector<CaseDecision>& decisions,
                             const Metadata& m);

}  // namespace dmaprobe
