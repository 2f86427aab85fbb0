// MPI (docs/scaling.md): under `mpirun -np K dmasim run|calibrate ...` the K ranks share the
// cases (round robin, as --shard does) and rank 0 writes exactly the files one process writes.
// Built with -DDMASIM_MPI=ON (Debian's Open MPI); without it every function here describes a
// single process. MPI is started only when the environment says mpirun (or srun) started this
// process, so that a plain `dmasim` never needs an MPI runtime.
#pragma once

#include <string>
#include <vector>

namespace dmasim::app::mpi {

// Whether this build has MPI.
bool built();
// Starts MPI when this process is a rank of a parallel job (Open MPI, PMIx or PMI environment
// variables). Call once, first thing in main().
void init(int* argc, char*** argv);
// Ends MPI if init() started it.
void finalize();
int rank();  // 0 without MPI
int size();  // 1 without MPI
// Every rank's bytes, in rank order, at rank 0 (the others get nothing) / at every rank.
std::vector<std::string> gather(const std::string& mine);
std::vector<std::string> allgather(const std::string& mine);
// The smallest of every rank's value, at every rank.
int allreduce_min(int value);

}  // namespace dmasim::app::mpi
