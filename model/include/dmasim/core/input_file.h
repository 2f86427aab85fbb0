// Reading a file the user named. Dependency-free (the CUDA harness reads its plan through it).
//
// Every input the tools read goes through here, so that a directory, FIFO or device given where
// a file is expected is refused before anything opens it (opening a FIFO for reading blocks
// until a writer appears; reading /dev/zero never ends), and so that no input can make the tool
// hold more memory than a real input of that kind could need.
#pragma once

#include <cstdint>
#include <string>

namespace dmasim::core {

// The largest input file any tool reads. The largest committed input (a measured CSV of a full
// plan) is well under 1 MiB; 64 MiB leaves room for long sweeps and bounds memory on bad input.
inline constexpr std::uint64_t kMaxInputFileBytes = std::uint64_t{64} << 20;

// Reads the whole of `path`. `what` names the kind of file in messages ("scenario", "plan").
// Throws InputError naming the path when it does not exist, is not a regular file, cannot be
// read, or is larger than `max_bytes`.
std::string read_input_file(const std::string& path, const std::string& what,
                            std::uint64_t max_bytes = kMaxInputFileBytes);

// True when `path` names an existing regular file (after following links). Never opens it.
bool is_regular_file(const std::string& path);

}  // namespace dmasim::core
