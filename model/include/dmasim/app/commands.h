// The dmasim command line: run, validate, plan, params. main() only forwards here so that
// the commands can be tested in-process.
#pragma once

#include <iosfwd>

namespace dmasim::app {

// Runs the CLI. Returns the process exit status: 0 success, 1 a failure while running,
// 2 bad input (command line, scenario files). Errors go to `err` as one line each.
int run_cli(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace dmasim::app
