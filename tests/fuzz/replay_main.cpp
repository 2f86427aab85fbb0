// A main() for the fuzz targets without libFuzzer: feeds every file named on the command line
// (directories: every regular file below them, in name order) to LLVMFuzzerTestOneInput once.
// This is how the normal and the sanitizer builds replay the committed regression inputs and
// the seed files (CTest label "fuzz"); a libFuzzer build of the same target accepts the same
// files as arguments.
//
//   replay_<target> PATH... [--optional PATH...]
// Paths after --optional may be missing (a target without regression inputs has no directory).
// Like libFuzzer (-timeout=10 -rss_limit_mb=2048), an input that runs longer than 10 s or makes
// the process hold more than 2 GiB is a failure: a watchdog thread aborts, naming the input, so
// that a parser that loops and allocates cannot take the machine's memory.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace fs = std::filesystem;

namespace {

constexpr int kTimeoutSeconds = 10;
constexpr long kRssLimitMb = 2048;

std::atomic<const char*> g_current{nullptr};
std::atomic<std::int64_t> g_started_ms{0};

std::int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

long rss_mb() {
    long pages = 0;
    long resident = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
        std::fclose(f);
    }
    return resident * (sysconf(_SC_PAGESIZE) / 1024) / 1024;
}

[[noreturn]] void watchdog() {
    for (;;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        const char* input = g_current.load();
        if (input == nullptr) continue;
        const long rss = rss_mb();
        const std::int64_t ms = now_ms() - g_started_ms.load();
        if (ms > kTimeoutSeconds * 1000 || rss > kRssLimitMb) {
            std::fprintf(stderr, "replay: %s: %s (%lld ms, %ld MiB resident): the target hangs or runs away\n", input,
                         rss > kRssLimitMb ? "over the memory limit" : "over the time limit",
                         static_cast<long long>(ms), rss);
            std::fflush(stderr);
            std::abort();
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    bool optional = false;
    std::vector<fs::path> inputs;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--optional") {
            optional = true;
            continue;
        }
        const fs::path p(arg);
        std::error_code ec;
        if (fs::is_directory(p, ec)) {
            std::vector<fs::path> found;
            for (const auto& e : fs::recursive_directory_iterator(p)) {
                if (e.is_regular_file()) found.push_back(e.path());
            }
            std::sort(found.begin(), found.end());
            inputs.insert(inputs.end(), found.begin(), found.end());
        } else if (fs::is_regular_file(p, ec)) {
            inputs.push_back(p);
        } else if (!optional) {
            std::fprintf(stderr, "replay: %s: no such file or directory\n", arg.c_str());
            return 2;
        }
    }
    std::thread(watchdog).detach();
    for (const auto& p : inputs) {
        std::ifstream in(p, std::ios::binary);
        if (!in) {
            std::fprintf(stderr, "replay: cannot read %s\n", p.c_str());
            return 2;
        }
        const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        // Printed first, so that a crash names its input.
        std::fprintf(stderr, "replay: %s (%zu bytes)\n", p.c_str(), data.size());
        g_started_ms.store(now_ms());
        g_current.store(p.c_str());
        LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(data.data()), data.size());
        g_current.store(nullptr);
    }
    std::fprintf(stderr, "replay: %zu inputs, no failure\n", inputs.size());
    return 0;
}
