// Runs the dmasim command line in-process for the CLI tests.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "dmasim/app/commands.h"

namespace dmasim::app::testing {

struct Outcome {
    int code;
    std::string out;
    std::string err;
};

inline Outcome cli(std::vector<std::string> args) {
    args.insert(args.begin(), "dmasim");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    std::ostringstream out, err;
    const int code = run_cli(static_cast<int>(argv.size()), argv.data(), out, err);
    return {code, out.str(), err.str()};
}

}  // namespace dmasim::app::testing
