// MPI for run and calibrate (dmasim/app/mpi.h). Only this file includes <mpi.h>.
#include "dmasim/app/mpi.h"

#include <cstdlib>
#include <stdexcept>

#ifdef DMASIM_MPI
#include <mpi.h>
#endif

namespace dmasim::app::mpi {

namespace {
int g_rank = 0;
int g_size = 1;
}  // namespace

#ifdef DMASIM_MPI

namespace {
bool g_started = false;
}  // namespace

bool built() { return true; }

void init(int* argc, char*** argv) {
    // Started by mpirun (Open MPI), or by a PMIx/PMI launcher such as srun.
    const bool launched = std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr ||
                          std::getenv("PMI_RANK") != nullptr;
    if (!launched) return;
    // Every rank forks its simulation workers (SystemC elaborates once per process); the
    // workers never call MPI and leave by _Exit.
    int provided = 0;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
        throw std::runtime_error("MPI_Init failed");
    }
    g_started = true;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
}

void finalize() {
    if (g_started) MPI_Finalize();
    g_started = false;
}

namespace {
std::vector<std::string> gather_impl(const std::string& mine, bool everyone) {
    if (!g_started || g_size == 1) return {mine};
    // Sizes first (64-bit: a large sweep's rows can pass 2 GiB in all, though no rank's can).
    const long long n = static_cast<long long>(mine.size());
    if (mine.size() > static_cast<std::size_t>(INT32_MAX)) throw std::runtime_error("an MPI message over 2 GiB");
    std::vector<long long> sizes(static_cast<std::size_t>(g_size));
    std::vector<int> counts(static_cast<std::size_t>(g_size)), displs(static_cast<std::size_t>(g_size));
    if (everyone) {
        MPI_Allgather(&n, 1, MPI_LONG_LONG, sizes.data(), 1, MPI_LONG_LONG, MPI_COMM_WORLD);
    } else {
        MPI_Gather(&n, 1, MPI_LONG_LONG, sizes.data(), 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    }
    const bool receives = everyone || g_rank == 0;
    long long total = 0;
    if (receives) {
        for (int r = 0; r < g_size; ++r) {
            counts[static_cast<std::size_t>(r)] = static_cast<int>(sizes[static_cast<std::size_t>(r)]);
            displs[static_cast<std::size_t>(r)] = static_cast<int>(total);
            total += sizes[static_cast<std::size_t>(r)];
        }
        if (total > INT32_MAX) throw std::runtime_error("MPI messages over 2 GiB in all");
    }
    std::string all(static_cast<std::size_t>(receives ? total : 0), '\0');
    if (everyone) {
        MPI_Allgatherv(mine.data(), static_cast<int>(n), MPI_CHAR, all.data(), counts.data(), displs.data(), MPI_CHAR,
                       MPI_COMM_WORLD);
    } else {
        MPI_Gatherv(mine.data(), static_cast<int>(n), MPI_CHAR, all.data(), counts.data(), displs.data(), MPI_CHAR, 0,
                    MPI_COMM_WORLD);
    }
    std::vector<std::string> out;
    if (!receives) return out;
    for (int r = 0; r < g_size; ++r) {
        out.push_back(all.substr(static_cast<std::size_t>(displs[static_cast<std::size_t>(r)]),
                                 static_cast<std::size_t>(counts[static_cast<std::size_t>(r)])));
    }
    return out;
}
}  // namespace

std::vector<std::string> gather(const std::string& mine) { return gather_impl(mine, false); }
std::vector<std::string> allgather(const std::string& mine) { return gather_impl(mine, true); }

int allreduce_min(int value) {
    if (!g_started || g_size == 1) return value;
    int out = value;
    MPI_Allreduce(&value, &out, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return out;
}

#else

bool built() { return false; }
void init(int*, char***) {}
void finalize() {}
std::vector<std::string> gather(const std::string& mine) { return {mine}; }
std::vector<std::string> allgather(const std::string& mine) { return {mine}; }
int allreduce_min(int value) { return value; }

#endif

int rank() { return g_rank; }
int size() { return g_size; }

}  // namespace dmasim::app::mpi
