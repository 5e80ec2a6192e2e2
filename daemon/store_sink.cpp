#include "store_sink.hpp"

namespace wstune::daemon {

// Stand-in until the store lands: results stay in memory.
std::pair<std::unique_ptr<ResultSink>, std::string> open_store_sink(const std::string&) {
  return {std::make_unique<MemorySink>(), std::string{}};
}

}  // namespace wstune::daemon
