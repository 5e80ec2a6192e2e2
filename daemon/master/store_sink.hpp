#pragma once
/// @file store_sink.hpp
/// The master's ResultSink over wstune's SQLite store (store.hpp): workers,
/// runs (split_runs), tune trials (sessions + trials + best configs) and
/// calibrations. Only the master opens the database.

#include <memory>
#include <string>
#include <utility>

#include "master/master.hpp"

namespace wstune::daemon {

/// Opens the store at `path` ("" = the store's default path) and returns the
/// sink and the path it opened. Throws StoreError / UsageError when the
/// database cannot be opened.
std::pair<std::unique_ptr<ResultSink>, std::string> open_store_sink(const std::string& path);

}  // namespace wstune::daemon
