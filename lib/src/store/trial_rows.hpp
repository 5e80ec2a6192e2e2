#pragma once
/// @file trial_rows.hpp
/// A measured Trial (evaluate/trial.hpp) as the store's TrialRecord row
/// (store.hpp) and back: the store sits after evaluation on the data path.

#include "evaluate/trial.hpp"
#include "wstune/store.hpp"

namespace wstune {

/// A tuner Trial as a store row: local size, status, error, every kernel
/// sample (ms) and the run's wall time as run_ms.
TrialRecord to_record(const Trial& t);
/// A stored row as a Trial (from_store = true), for TuneOptions::lookup.
Trial from_record(const TrialRecord& r);

}  // namespace wstune
