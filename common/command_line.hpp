// Command-line parsing for the small programs beside the chapters (bench/pointer_chase,
// solutions/): CLI11, with this project's exit codes (harness.hpp): --help prints the usage and
// exits 0, a bad or unknown argument says why on stderr and exits 2.
#pragma once

#include <CLI/CLI.hpp>

#include <iostream>
#include <string>

#include "harness.hpp"

namespace red {

// Returns -1 when the program should go on, else the exit code to stop with.
inline int parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return kExitPassed;
  } catch (const CLI::ParseError& e) {
    std::cerr << app.get_name() << ": error: " << e.what() << " (see --help)\n";
    return kExitUsage;
  }
  return -1;
}

}  // namespace red
