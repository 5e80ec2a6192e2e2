#pragma once
/// @file parameter_sets.hpp
/// Valid combinations of tuning-parameter values held compactly: one row of
/// value indices per combination (index k of a row is an index into
/// parameter k's Values), all rows in one flat array of 1, 2 or 4 bytes per
/// index (the smallest that holds the largest value count). No object per
/// combination: n parameters of at most 256 values cost n bytes a row.
/// Rows in odometer order (the last parameter varies fastest, as the
/// Cartesian product of the T1 TuningParameters lists them; Kernel Tuner's
/// Searchspace sorts its list the same way) are found by binary search.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace wstune {

/// Rows of value indices over parameters with fixed value counts.
class ParameterSets {
 public:
  /// No parameters, no rows.
  ParameterSets() = default;
  /// No rows yet, over parameters with `sizes[k]` values each (each ≥ 1).
  explicit ParameterSets(std::vector<std::uint32_t> sizes);

  /// Number of rows (with no parameters: 0 or 1, the empty combination).
  [[nodiscard]] std::size_t size() const noexcept { return rows_; }
  /// True without rows.
  [[nodiscard]] bool empty() const noexcept { return rows_ == 0; }
  /// Number of parameters (indices per row).
  [[nodiscard]] std::size_t width() const noexcept { return sizes_.size(); }
  /// Each parameter's value count.
  [[nodiscard]] const std::vector<std::uint32_t>& sizes() const noexcept { return sizes_; }
  /// Bytes per value index: 1, 2 or 4.
  [[nodiscard]] unsigned index_bytes() const noexcept { return bytes_; }
  /// Bytes the rows occupy (capacity included).
  [[nodiscard]] std::size_t memory_bytes() const noexcept { return data_.capacity(); }

  /// Value index of parameter k in row r (r < size(), k < width()).
  [[nodiscard]] std::uint32_t at(std::size_t r, std::size_t k) const noexcept;
  /// Row r's value indices into `out` (out.size() == width()).
  void row(std::size_t r, std::span<std::uint32_t> out) const noexcept;
  /// Row r's value indices.
  [[nodiscard]] std::vector<std::uint32_t> row(std::size_t r) const;

  /// The rows with these odometer ranks (a row's rank is its position in
  /// the Cartesian product in odometer order: the mixed-radix number of its
  /// value indices), without repeats, sorted and decoded. With `group` > 0
  /// the ranks are in ascending order of rank / group already (only those
  /// in one group need sorting); else in any order. Needs a product of the
  /// sizes below 2^64 (rank_strides()).
  static ParameterSets from_ranks(std::vector<std::uint32_t> sizes, std::vector<std::uint64_t> ranks,
                                  std::uint64_t group = 0);
  /// Each parameter's weight in a row's odometer rank (the product of the
  /// sizes after it); nullopt when the product of all sizes reaches 2^64.
  static std::optional<std::vector<std::uint64_t>> rank_strides(const std::vector<std::uint32_t>& sizes);

  /// Appends a row (idx.size() == width(), each index below its size).
  void push_back(std::span<const std::uint32_t> idx);
  /// Reserves room for `rows` rows.
  void reserve(std::size_t rows);
  /// Sorts the rows into odometer order (a no-op when they are in it).
  void sort();
  /// True when the rows are in strictly ascending odometer order.
  [[nodiscard]] bool sorted() const noexcept;
  /// The row equal to `idx`, by binary search; needs sorted rows.
  [[nodiscard]] std::optional<std::size_t> find(std::span<const std::uint32_t> idx) const noexcept;
  /// Keeps the rows r with keep[r] (keep.size() == size()), in order.
  void retain(const std::vector<bool>& keep);
  /// Gives back memory beyond the rows held.
  void shrink_to_fit();

 private:
  [[nodiscard]] int compare(std::size_t r, std::span<const std::uint32_t> idx) const noexcept;
  void sort_by_rows();

  [[nodiscard]] std::size_t stride() const noexcept { return sizes_.size() * bytes_; }
  void put(std::uint8_t* p, std::uint32_t v) const noexcept;

  std::vector<std::uint32_t> sizes_;
  unsigned bytes_ = 1;
  std::size_t rows_ = 0;
  bool known_sorted_ = true;        // in odometer order for certain (else check)
  std::vector<std::uint8_t> data_;  // rows_ × width() indices of bytes_ bytes (host byte order), then room
};

}  // namespace wstune
