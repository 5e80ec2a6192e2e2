// wstune: the command-line tool. `wstune COMMAND --help` for each command.
#include <cstring>
#include <iostream>

#include <fmt/format.h>

#include "command.hpp"
#include "wstune/error.hpp"
#include "wstune/version.hpp"

namespace {

void usage(std::ostream& os) {
  os << "wstune " << wstune::version() << " - auto-tunes OpenCL work sizes across unlike devices\n\n"
     << "usage: wstune COMMAND [options]   (wstune COMMAND --help for its options)\n\ncommands:\n";
  for (const auto& c : wstune::cli::commands()) os << fmt::format("  {:<10} {}\n", c.name, c.summary);
  os << "\nexit status: 0 ok, 1 runtime error, 2 usage error\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(std::cerr);
    return 2;
  }
  const std::string cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    usage(std::cout);
    return 0;
  }
  if (cmd == "--version" || cmd == "-V") {
    std::cout << "wstune " << wstune::version() << "\n";
    return 0;
  }
  for (const auto& c : wstune::cli::commands()) {
    if (c.name != cmd) continue;
    try {
      for (int i = 2; i < argc; ++i) {
        if (std::strcmp(argv[i], "--version") == 0) {
          std::cout << "wstune " << wstune::version() << "\n";
          return 0;
        }
      }
      return c.run(argc - 1, argv + 1);
    } catch (const wstune::UsageError& e) {
      std::cerr << "wstune " << cmd << ": " << e.what() << "\n";
      return 2;
    } catch (const std::exception& e) {
      std::cerr << "wstune " << cmd << ": error: " << e.what() << "\n";
      return 1;
    }
  }
  std::cerr << fmt::format("wstune: unknown command '{}'; run 'wstune --help' for the list\n", cmd);
  return 2;
}
