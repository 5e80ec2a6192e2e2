#pragma once
// Tuner::build_best's online tuning of a tuning file's parameters
// (BuildBestOnline, tuner.hpp): the search `wstune tune --kernel-file`
// runs, in the app's process. Internal to libwstune.
#include <string>

#include "kernel/kernel.hpp"
#include "wstune/store.hpp"
#include "wstune/tuner.hpp"

namespace wstune::detail {

/// What one online tuning did.
struct OnlineParamsTuning {
  unsigned evaluations = 0;  ///< configurations measured (taken from a resumed session included)
  bool stored = false;       ///< a best was stored for this device and size
  std::string note;          ///< why not ("" when stored)
};

/// UsageError naming the field and the fix when `online` is enabled with a
/// bad budget (max_evals 0, max_time ≤ 0).
void check_budget(const BuildBestOnline& online);

/// Tunes `spec` at problem `p` on `device` (in a context of its own, on the
/// file's inputs) within `online`'s budget, storing the session, its trials
/// and the best in `store`. Never throws: an error is the result's note.
OnlineParamsTuning tune_parameters_online(Store& store, const KernelSpec& spec, const Problem& p,
                                          const DeviceInfo& device, const BuildBestOnline& online) noexcept;

}  // namespace wstune::detail
