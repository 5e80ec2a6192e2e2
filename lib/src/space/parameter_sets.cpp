// Rows of value indices in one flat array (parameter_sets.hpp).
#include "space/parameter_sets.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>

namespace wstune {

namespace {

// The product of the sizes, nullopt beyond 2^64.
std::optional<std::uint64_t> product(const std::vector<std::uint32_t>& sizes) {
  std::uint64_t p = 1;
  for (std::uint32_t s : sizes)
    if (__builtin_mul_overflow(p, std::uint64_t{s}, &p)) return std::nullopt;
  return p;
}

// LSD radix sort of 64-bit keys below 2^bits, 11 bits a pass.
void radix_sort(std::vector<std::uint64_t>& keys, unsigned bits) {
  constexpr unsigned digit = 11;
  constexpr std::size_t buckets = std::size_t{1} << digit;
  std::vector<std::uint64_t> tmp(keys.size());
  for (unsigned shift = 0; shift < bits; shift += digit) {
    std::vector<std::size_t> count(buckets + 1, 0);
    for (std::uint64_t k : keys) ++count[((k >> shift) & (buckets - 1)) + 1];
    std::partial_sum(count.begin(), count.end(), count.begin());
    for (std::uint64_t k : keys) tmp[count[(k >> shift) & (buckets - 1)]++] = k;
    keys.swap(tmp);
  }
}

// Sorts ranks below `total`; with `group`, ranks already ascending by
// rank / group: each run of one group sorted alone (in cache), unless the
// runs are long, then all at once by radix.
void sort_ranks(std::vector<std::uint64_t>& ranks, std::uint64_t total, std::uint64_t group) {
  const auto radix_all = [&] {
    const std::uint64_t top = total - 1;
    radix_sort(ranks, top == 0 ? 1 : static_cast<unsigned>(64 - __builtin_clzll(top)));
  };
  if (group == 0 || group >= total) return radix_all();
  std::size_t first = 0;
  while (first < ranks.size()) {
    const std::uint64_t g = ranks[first] / group;
    std::size_t last = first + 1;
    while (last < ranks.size() && ranks[last] / group == g) ++last;
    if (last - first > (std::size_t{1} << 16) && ranks.size() > (std::size_t{1} << 20)) return radix_all();
    std::sort(ranks.begin() + static_cast<std::ptrdiff_t>(first), ranks.begin() + static_cast<std::ptrdiff_t>(last));
    first = last;
  }
}

}  // namespace

ParameterSets::ParameterSets(std::vector<std::uint32_t> sizes) : sizes_(std::move(sizes)) {
  std::uint32_t most = 0;
  for (std::uint32_t s : sizes_) {
    if (s == 0) throw std::invalid_argument("ParameterSets: a parameter without values");
    most = std::max(most, s);
  }
  bytes_ = most <= 256 ? 1 : (most <= 65536 ? 2 : 4);
}

std::uint32_t ParameterSets::at(std::size_t r, std::size_t k) const noexcept {
  const std::uint8_t* p = data_.data() + (r * sizes_.size() + k) * bytes_;
  if (bytes_ == 1) return *p;
  if (bytes_ == 2) {
    std::uint16_t v = 0;
    std::memcpy(&v, p, 2);
    return v;
  }
  std::uint32_t v = 0;
  std::memcpy(&v, p, 4);
  return v;
}

void ParameterSets::row(std::size_t r, std::span<std::uint32_t> out) const noexcept {
  for (std::size_t k = 0; k < sizes_.size(); ++k) out[k] = at(r, k);
}

std::vector<std::uint32_t> ParameterSets::row(std::size_t r) const {
  std::vector<std::uint32_t> out(sizes_.size());
  row(r, out);
  return out;
}

void ParameterSets::put(std::uint8_t* p, std::uint32_t v) const noexcept {
  if (bytes_ == 1) {
    *p = static_cast<std::uint8_t>(v);
  } else if (bytes_ == 2) {
    const auto s = static_cast<std::uint16_t>(v);
    std::memcpy(p, &s, 2);
  } else {
    std::memcpy(p, &v, 4);
  }
}

void ParameterSets::push_back(std::span<const std::uint32_t> idx) {
  const std::size_t at = rows_ * stride();
  if (data_.size() < at + stride()) data_.resize(std::max(2 * data_.size(), at + stride() + 64));
  std::uint8_t* p = data_.data() + at;
  for (std::uint32_t v : idx) {
    put(p, v);
    p += bytes_;
  }
  ++rows_;
  known_sorted_ = rows_ <= 1;
}

void ParameterSets::reserve(std::size_t rows) {
  if (data_.size() < rows * stride()) data_.resize(rows * stride());
}

void ParameterSets::shrink_to_fit() {
  data_.resize(rows_ * stride());
  data_.shrink_to_fit();
}

int ParameterSets::compare(std::size_t r, std::span<const std::uint32_t> idx) const noexcept {
  for (std::size_t k = 0; k < sizes_.size(); ++k) {
    const std::uint32_t v = at(r, k);
    if (v != idx[k]) return v < idx[k] ? -1 : 1;
  }
  return 0;
}

bool ParameterSets::sorted() const noexcept {
  if (known_sorted_) return true;
  if (bytes_ == 1) {  // one byte an index: bytewise order is the odometer order
    for (std::size_t r = 1; r < rows_; ++r)
      if (std::memcmp(data_.data() + (r - 1) * stride(), data_.data() + r * stride(), stride()) >= 0) return false;
    return true;
  }
  std::vector<std::uint32_t> prev(sizes_.size());
  for (std::size_t r = 1; r < rows_; ++r) {
    row(r - 1, prev);
    if (compare(r, prev) <= 0) return false;
  }
  return true;
}

void ParameterSets::sort() {
  if (rows_ < 2 || sorted()) {
    known_sorted_ = true;
    return;
  }
  if (const auto st = rank_strides(sizes_)) {
    std::vector<std::uint64_t> ranks(rows_);
    for (std::size_t r = 0; r < rows_; ++r) {
      std::uint64_t key = 0;
      for (std::size_t k = 0; k < sizes_.size(); ++k) key += at(r, k) * (*st)[k];
      ranks[r] = key;
    }
    *this = from_ranks(sizes_, std::move(ranks));
  } else {
    sort_by_rows();
  }
  known_sorted_ = true;
}

std::optional<std::vector<std::uint64_t>> ParameterSets::rank_strides(const std::vector<std::uint32_t>& sizes) {
  if (!product(sizes)) return std::nullopt;
  std::vector<std::uint64_t> st(sizes.size());
  std::uint64_t w = 1;
  for (std::size_t k = sizes.size(); k-- > 0;) {
    st[k] = w;
    w *= sizes[k];
  }
  return st;
}

// Sorted ranks decoded one after the other: the next row is the last one
// plus the difference of their ranks, carried through the digits (no
// division per digit when the ranks are close, as the valid ones are).
ParameterSets ParameterSets::from_ranks(std::vector<std::uint32_t> sizes, std::vector<std::uint64_t> ranks,
                                        std::uint64_t group) {
  const auto total = product(sizes);
  if (!total) throw std::invalid_argument("ParameterSets::from_ranks: 2^64 combinations or more");
  sort_ranks(ranks, *total, group);
  ParameterSets out(std::move(sizes));
  const std::size_t n = out.sizes_.size();
  out.data_.resize(ranks.size() * out.stride());
  std::vector<std::uint32_t> digit(n, 0);
  std::uint64_t last = 0;
  std::uint8_t* p = out.data_.data();
  for (std::uint64_t rank : ranks) {
    std::uint64_t carry = rank - last;  // ascending: never negative
    last = rank;
    for (std::size_t k = n; k-- > 0 && carry > 0;) {
      const std::uint64_t s = out.sizes_[k];
      std::uint64_t d = digit[k] + carry;
      if (d < s) {
        carry = 0;
      } else if (d < 4 * s) {
        carry = 0;
        while (d >= s) {
          d -= s;
          ++carry;
        }
      } else {
        carry = d / s;
        d %= s;
      }
      digit[k] = static_cast<std::uint32_t>(d);
    }
    for (std::size_t k = 0; k < n; ++k) {
      out.put(p, digit[k]);
      p += out.bytes_;
    }
  }
  out.rows_ = ranks.size();
  out.known_sorted_ = true;
  return out;
}

// Beyond 2^64 combinations: the row numbers sorted by their rows.
void ParameterSets::sort_by_rows() {
  std::vector<std::size_t> order(rows_);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::vector<std::uint32_t> a(sizes_.size());
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    row(y, a);
    return compare(x, a) < 0;
  });
  std::vector<std::uint8_t> out(rows_ * stride());
  for (std::size_t r = 0; r < rows_; ++r)
    std::memcpy(out.data() + r * stride(), data_.data() + order[r] * stride(), stride());
  data_.swap(out);
}

std::optional<std::size_t> ParameterSets::find(std::span<const std::uint32_t> idx) const noexcept {
  if (idx.size() != sizes_.size()) return std::nullopt;
  std::size_t lo = 0, hi = rows_;
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    const int c = compare(mid, idx);
    if (c == 0) return mid;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return std::nullopt;
}

void ParameterSets::retain(const std::vector<bool>& keep) {
  std::size_t out = 0;
  for (std::size_t r = 0; r < rows_; ++r) {
    if (!keep[r]) continue;
    if (out != r) std::memmove(data_.data() + out * stride(), data_.data() + r * stride(), stride());
    ++out;
  }
  rows_ = out;  // the order of the rows kept is kept
}

}  // namespace wstune
