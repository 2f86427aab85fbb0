// Child processes and temporary files that must not outlive the command that made them.
//
// SystemC elaborates one platform per process, so run, compare and calibrate simulate in forked
// worker processes (dmasim/app/parallel.h) that send their rows back over a socket. While a
// command runs, SIGINT, SIGTERM and SIGHUP end its children (and theirs), remove its temporary
// files and exit with 128 + the signal; a child ends when its parent dies, even by SIGKILL.
// Implemented in model/src/app/commands.cpp.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

namespace dmasim::app {

// Installs the termination handler for its lifetime (run_cli holds one); signals that were
// ignored when it started stay ignored.
class TerminationHandler {
public:
    TerminationHandler();
    ~TerminationHandler();
    TerminationHandler(const TerminationHandler&) = delete;
    TerminationHandler& operator=(const TerminationHandler&) = delete;
};

// A temporary file in $TMPDIR (else /tmp), created empty, removed when the object goes and by
// the termination handler.
class TempFile {
public:
    explicit TempFile(const std::string& prefix);
    ~TempFile();
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
    const std::string& path() const { return path_; }

private:
    std::string path_;
    pid_t owner_;  // a forked child holds a copy it must not remove
};

// fork() for a child that ends with its parent: returns the child's pid in the parent (the child
// is registered with the termination handler) and 0 in the child, where the parent's children
// and temporary files are forgotten and `own` (the temporary files the child writes) registered
// instead, so that a child killed with its parent removes them. The child must leave by
// std::_Exit. Throws std::runtime_error if no process can be started.
pid_t fork_child(const std::vector<std::string>& own = {});

// Waits for a child of fork_child() and returns its wait status (waitpid's).
int wait_child(pid_t pid);

}  // namespace dmasim::app
