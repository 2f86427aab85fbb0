#include <iostream>

#include "dmasim/app/commands.h"

int main(int argc, char** argv) { return dmasim::app::run_cli(argc, argv, std::cout, std::cerr); }
