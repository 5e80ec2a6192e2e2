// A measured Trial as a store row and back.
#include "store/trial_rows.hpp"

namespace wstune {

TrialRecord to_record(const Trial& t) {
  TrialRecord r;
  r.params = t.params;
  r.local = t.local;
  r.global = t.global;
  if (t.compile_ms > 0) r.compile_ms = t.compile_ms;
  if (t.verified) r.verify_ms = t.verify_ms;
  r.status = t.status;
  r.error = t.error;
  r.samples_ms = t.kernel.ms;
  r.run_ms = t.run_wall_ms;
  r.energy = t.energy;
  return r;
}

Trial from_record(const TrialRecord& r) {
  Trial t;
  t.params = r.params;
  t.local = r.local;
  t.global = r.global;
  t.compile_ms = r.compile_ms.value_or(0);
  t.verify_ms = r.verify_ms.value_or(0);
  t.status = r.status;
  t.error = r.error;
  t.kernel.ms = r.samples_ms;
  t.run_wall_ms = r.run_ms.value_or(0);
  t.energy = r.energy;
  t.from_store = true;
  return t;
}

}  // namespace wstune
