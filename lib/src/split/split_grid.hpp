#pragma once
/// @file split_grid.hpp
/// The oracle for a split over N devices: the makespan measured on a grid
/// over the simplex of shares (every split whose shares are multiples of
/// 1/divisions of the range), then on a finer grid around the best point.
/// The N-device analogue of sweep_two() (multi_device.hpp), used to judge
/// the measured model's refinement (split_refine.hpp). The enumeration is
/// pure; sweep_grid() measures it on a MultiDeviceRunner. See docs/split.md.

#include <string>
#include <vector>

#include "split/multi_device.hpp"
#include "split/split.hpp"

namespace wstune {

/// The grid over the simplex: for every composition k of `divisions` into
/// lattice.size() parts (k_i ≥ 0, Σ k_i = divisions) the split with
/// fractions k_i / divisions, aligned by SplitLattice::snap() (a device with
/// k_i = 0 gets nothing unless no other can take the remainder); each split
/// once, in the order of the compositions (lexicographic, the first device's
/// share descending). C(divisions + N − 1, N − 1) compositions: 66 for three
/// devices at 10 %, 231 at 5 %. Compositions that do not align are left
/// out. Throws UsageError for no devices or divisions 0.
std::vector<Shares> simplex_grid(const SplitLattice& lattice, unsigned divisions);

/// The finer grid around `center`: the splits with fractions that are
/// multiples of 1 / (divisions × subdivisions) and lie within one coarse
/// step (1 / divisions of the range) of center's fractions (rounded to the
/// fine grid) in every device, aligned as in simplex_grid(); center itself
/// is among them when it lies on the fine grid. At most
/// (2·subdivisions + 1)^(N−1) splits. Throws UsageError for no devices,
/// divisions or subdivisions 0, or a center of the wrong size.
std::vector<Shares> simplex_grid_around(const SplitLattice& lattice, const Shares& center, unsigned divisions,
                                        unsigned subdivisions);

/// How the grid oracle measures (sweep_grid()).
struct GridOptions {
  unsigned divisions = 10;    ///< the coarse grid: shares in steps of 1/divisions (10: 10 %)
  unsigned subdivisions = 2;  ///< the finer grid around the best: steps of 1/(divisions·subdivisions); 1: none
  /// Skip a split when some device's share is at least a share at which
  /// that device's own time (its thread's wall clock: upload, kernel,
  /// read-back) already exceeded `prune` × the best makespan measured so far:
  /// the makespan is at least that device's time, which grows with its slice,
  /// so the split cannot win (a CPU given half of matmul 4096 next to two
  /// GPUs takes seconds). 0: run every split.
  double prune = 1.5;
  /// The bound for a device alone (≥ prune): it is skipped only when its
  /// time with a smaller slice already exceeded this many times the best
  /// makespan, so the devices alone that can matter are measured.
  double prune_alone = 10;
};

/// The measured grid oracle: every split of simplex_grid(divisions) run
/// concurrently (MultiDeviceRunner::run with `timing`), then, when
/// subdivisions > 1, every new split of simplex_grid_around() the best
/// correct point. The grid is walked with the devices ordered by total PEs,
/// most first (a GPU's large shares before a CPU's), so that pruning
/// (GridOptions::prune) skips the hopeless splits early; a skipped split is
/// kept as a point with TrialStatus::timeout and an error starting "not
/// run:" that names the device and times. Points are returned sorted by
/// their shares (descending first device share); each split runs once; a
/// failed run is kept as a point with its status. SweepPoint::percent_first
/// is the first device's share. Throws UsageError as simplex_grid() does,
/// when `locals` has the wrong size, prune is negative or prune_alone < prune.
std::vector<SweepPoint> sweep_grid(MultiDeviceRunner& runner, unsigned dim, const std::vector<LocalSize>& locals,
                                   const TimingOptions& timing, const GridOptions& grid = {});

/// A grid as CSV: header "units_0,…,units_{N−1},percent_0,…,percent_{N−1},
/// devices,status,makespan_median_ms,makespan_min_ms" (devices: the used
/// device indices joined by '+'), one row per point.
std::string grid_csv(const std::vector<SweepPoint>& grid);

}  // namespace wstune
