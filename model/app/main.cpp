#include <iostream>
#include <streambuf>

#include "dmasim/app/commands.h"
#include "dmasim/app/mpi.h"

namespace {
// Output nobody reads: ranks other than 0 of an MPI job, whose results rank 0 prints.
class NullBuffer : public std::streambuf {
protected:
    int overflow(int c) override { return c; }
};
}  // namespace

int main(int argc, char** argv) {
    dmasim::app::mpi::init(&argc, &argv);
    NullBuffer null_buffer;
    std::ostream null_stream(&null_buffer);
    const bool silent = dmasim::app::mpi::rank() != 0;
    const int status = dmasim::app::run_cli(argc, argv, silent ? null_stream : std::cout, silent ? null_stream : std::cerr);
    dmasim::app::mpi::finalize();
    return status;
}
