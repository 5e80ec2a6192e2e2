#pragma once
// Small helpers shared by the benchmark programs in bench/.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <boost/program_options/errors.hpp>

#include "wstune/error.hpp"

namespace wstune::bench {

/// "a,b,,c" split on `sep`, empty parts dropped.
inline std::vector<std::string> split_list(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const auto end = std::min(text.find(sep, pos), text.size());
    if (end > pos) out.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

/// Writes `text` to `path` and says so on stderr; throws Error naming the path.
inline void write(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  if (!(f << text)) throw Error(fmt::format("cannot write {}; check that the directory exists", path));
  std::cerr << "wrote " << path << "\n";
}

/// Runs a benchmark's main body: usage errors exit 2, other failures 1, each
/// with one line naming the program.
template <typename Body>
int guarded_main(const char* program, Body&& body) {
  try {
    return body();
  } catch (const UsageError& e) {
    std::cerr << program << ": " << e.what() << "\n";
    return 2;
  } catch (const boost::program_options::error& e) {
    std::cerr << program << ": " << e.what() << " (see --help)\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << program << ": " << e.what() << "\n";
    return 1;
  }
}

}  // namespace wstune::bench
