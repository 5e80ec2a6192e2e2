#pragma once
/// @file solver.hpp
/// The valid combinations of tuning-parameter values under constraints,
/// found by backtracking with forward checking instead of stepping through
/// the Cartesian product (issue 37). Each parameter is a variable whose
/// domain is its value indices; each constraint names the parameters it
/// reads. Constraints of no parameter are decided once, of one parameter
/// prune its domain before the search (node consistency), and of more are
/// checked by forward checking: as soon as all but one of a constraint's
/// parameters are bound, the last one's domain keeps only the values that
/// satisfy it, and a domain left empty ends that branch. Before that, a
/// constraint with a look-ahead (Constraint::outlook: interval bounds for
/// T1 Conditions) drops a partial combination it rules out for every value
/// its unbound parameters have left; and forward checking of such a
/// constraint, while no table remembers its answers, bisects the last
/// parameter's values with the look-ahead (a half it rules out goes, one
/// it accepts stays), checking only parts of one or two values. A
/// constraint's answers are remembered per combination of its own
/// parameters' values: a table of up to 2^22 entries, made at once up to
/// 2^16 entries and larger ones once the constraint has been evaluated for
/// a sixteenth of them, so a condition is evaluated at most once per
/// combination of the values it reads, however many full combinations share
/// them. The parameters are bound in their own order (which finds the
/// combinations in odometer order), parameters with one value first,
/// unless a greedy order (repeatedly the parameter sharing most
/// constraints with those already ordered) has a tree estimated at less
/// than half the size (each level's domain times the share of values its
/// constraints allow, measured on their small tables); then the
/// combinations are sorted. Invalid combinations are never materialised:
/// the work and memory grow with the valid combinations and the partial
/// ones forward checking keeps, not with the product of the value counts.
///
/// A constraint that throws (a T1 Condition that cannot be evaluated) is an
/// error only where the brute-force loop would also meet it: when the
/// conditions before it (in the order given) can all hold with the values it
/// failed on; otherwise those values are invalid anyway and it counts as
/// false. (The brute-force loop evaluates the conditions of each
/// combination in order and stops at the first false one, so it may meet an
/// error on a combination that this search prunes by a later condition
/// first: then this search reports no error where brute force did.)
///
/// Sources: Haralick & Elliott, "Increasing tree search efficiency for
/// constraint satisfaction problems", Artificial Intelligence 14 (1980)
/// (forward checking, fail-first ordering); Lhomme, "Consistency techniques
/// for numeric CSPs", IJCAI 1993 (interval bounds in search); python-constraint's
/// OptimizedBacktrackingSolver as Kernel Tuner 1.5 uses it
/// (kernel_tuner/searchspace.py) and Willemsen et al., arXiv 2509.26253
/// (constraint solving for auto-tuning search spaces).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "space/parameter_sets.hpp"

namespace wstune {

/// The value indices a parameter may still take while solving: its one
/// value index when it is bound, else bit v of the words set when value
/// index v is possible.
struct DomainView {
  std::span<const std::uint64_t> bits;  ///< one bit per value index, 64 a word (bound < 0)
  std::int64_t bound = -1;              ///< the value index it is bound to, or -1
};

/// What a constraint's look-ahead says of the values left.
enum class Outlook : std::uint8_t {
  never,  ///< no choice among them satisfies it
  maybe,  ///< some may
  always  ///< every choice satisfies it
};

/// A constraint on tuning parameters, as the solver takes it.
struct Constraint {
  /// The indices of the parameters it reads: ascending, unique.
  std::vector<std::uint32_t> params;
  /// True when it holds with parameter params[j] at value index idx[j];
  /// may throw UsageError (see the file comment for how that is treated).
  std::function<bool(std::span<const std::uint32_t> idx)> holds;
  /// Optional look-ahead over the values left in `domains` (one per
  /// params[j]; a bound parameter's gives its value): never when no
  /// choice among them can make it hold, always when every choice does
  /// (and none fails), maybe otherwise (always safe to answer). Asked while
  /// two or more of its parameters are unbound, so that a partial
  /// combination is dropped before its remaining parameters are bound, and
  /// by forward checking to accept or reject halves of the last
  /// parameter's values at once when no table remembers its answers.
  std::function<Outlook(std::span<const DomainView> domains)> outlook;
};

/// What a solve did, for benchmarks and tests.
struct SolverStats {
  std::uint64_t nodes = 0;        ///< partial combinations bound (search-tree nodes)
  std::uint64_t checks = 0;       ///< constraint checks (table look-ups or evaluations)
  std::uint64_t evaluations = 0;  ///< calls of Constraint::holds
  std::uint64_t lookaheads = 0;   ///< calls of Constraint::outlook
  std::uint64_t pruned = 0;       ///< partial combinations a look-ahead dropped
};

/// The valid combinations of parameters with `sizes[k]` values each (each ≥
/// 1) under `constraints`. One object answers any number of questions; the
/// answers remembered for one serve the next. Not thread-safe.
class SpaceSolver {
 public:
  /// Throws std::invalid_argument for a size of 0 or a constraint naming a
  /// parameter out of range or not in ascending order.
  SpaceSolver(std::vector<std::uint32_t> sizes, std::vector<Constraint> constraints);
  /// Movable, not copyable (it owns the tables of remembered answers).
  SpaceSolver(SpaceSolver&&) noexcept;
  /// Moves.
  SpaceSolver& operator=(SpaceSolver&&) noexcept;
  ~SpaceSolver();

  /// Restricts parameter k to the one value index v before solving (the
  /// combinations with that value); v < sizes[k].
  void fix(std::uint32_t k, std::uint32_t v);
  /// Every valid combination, as rows in odometer order.
  /// @throws UsageError from a constraint, as the file comment says
  [[nodiscard]] ParameterSets solve();
  /// Calls `visit` with each valid combination (value indices by
  /// parameter), in the solver's order (not odometer order); nothing is
  /// held. `visit` returns false to stop.
  void for_each(const std::function<bool(std::span<const std::uint32_t>)>& visit);
  /// The number of valid combinations (saturating at 2^64 - 1), without
  /// holding them; the tail of parameters that no constraint still has to
  /// check is counted by multiplying domain sizes.
  [[nodiscard]] std::uint64_t count();
  /// The first valid combination in odometer order, nullopt when none is.
  [[nodiscard]] std::optional<std::vector<std::uint32_t>> first();
  /// Work done so far.
  [[nodiscard]] const SolverStats& stats() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace wstune
