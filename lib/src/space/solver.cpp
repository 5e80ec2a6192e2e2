// Backtracking with forward checking over tuning-parameter domains (solver.hpp).
#include "space/solver.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "wstune/error.hpp"

namespace wstune {

namespace {

using u32 = std::uint32_t;
using u64 = std::uint64_t;

constexpr u64 kMemoEntries = u64{1} << 22;  // largest table of remembered answers per constraint
constexpr u64 kMemoAtOnce = u64{1} << 16;   // tables up to this size are made at once, larger ones when they pay

// Saturating products of counts.
u64 mul_sat(u64 a, u64 b) {
  u64 r = 0;
  return __builtin_mul_overflow(a, b, &r) ? ~u64{0} : r;
}
u64 add_sat(u64 a, u64 b) {
  u64 r = 0;
  return __builtin_add_overflow(a, b, &r) ? ~u64{0} : r;
}

// A forward check: after binding the variable of its level, constraint `c`
// has one unbound parameter left, params[target] (variable `var`).
struct Check {
  u32 c = 0;
  u32 target = 0;
  u32 var = 0;
};

// One order of the variables and the checks each level triggers.
struct Plan {
  std::vector<u32> order;
  std::vector<u32> pos;                     // per variable, its level
  std::vector<std::vector<Check>> checks;   // per level: forward checks
  std::vector<std::vector<u32>> lookahead;  // per level: constraints whose outlook is asked
  std::size_t free_from = 0;                // levels from here trigger no check
};

}  // namespace

struct SpaceSolver::Impl {
  std::vector<u32> sizes;
  std::vector<Constraint> cons;
  std::vector<std::optional<u32>> fixed;
  SolverStats stats;
  // Remembered answers per constraint: 0 unknown, 1 false, 2 true.
  std::vector<std::vector<std::uint8_t>> memo;
  std::vector<std::vector<u64>> stride;  // per constraint and parameter, into memo
  std::vector<u64> memo_size;            // per constraint, its table's entries (0: none)
  std::vector<u64> memo_after;           // per constraint, evaluations before its table is made
  // Domains as bitsets: the words of variable v at offset[v], words[v] of them.
  std::vector<std::size_t> offset, words;
  std::size_t width = 0;  // words of all domains
  std::vector<u64> root;  // the domains before the search
  bool root_ready = false, root_empty = false;
  std::vector<u32> assign, scratch;
  std::vector<DomainView> views;  // outlook's arguments
  std::vector<u64> part;          // a part of the last parameter's values, bisected
  std::vector<u32> values;        // the last parameter's values while bisected

  Impl(std::vector<u32> s, std::vector<Constraint> c) : sizes(std::move(s)), cons(std::move(c)) {
    validate();
    lay_out_domains();
    make_memos();
  }

  void validate() const {
    for (u32 v : sizes)
      if (v == 0) throw std::invalid_argument("SpaceSolver: a parameter without values");
    for (const auto& k : cons)
      for (std::size_t j = 0; j < k.params.size(); ++j)
        if (k.params[j] >= sizes.size() || (j && k.params[j] <= k.params[j - 1]))
          throw std::invalid_argument("SpaceSolver: constraint parameters out of range or order");
  }

  // Each domain's words, and the scratch space of checks and look-aheads.
  void lay_out_domains() {
    fixed.resize(sizes.size());
    assign.resize(sizes.size());
    for (std::size_t v = 0; v < sizes.size(); ++v) {
      offset.push_back(width);
      words.push_back((sizes[v] + 63) / 64);
      width += words.back();
    }
    std::size_t arity = 0;
    for (const auto& k : cons) arity = std::max(arity, k.params.size());
    scratch.resize(arity);
    views.resize(arity);
  }

  // A table of answers for each constraint with at most kMemoEntries
  // combinations of its parameters' values: made now up to kMemoAtOnce
  // entries, else once the constraint has been evaluated for a sixteenth
  // of its entries (zeroing a large table costs more than a search that
  // asks it little).
  void make_memos() {
    memo.resize(cons.size());
    stride.resize(cons.size());
    memo_size.assign(cons.size(), 0);
    memo_after.assign(cons.size(), 0);
    for (std::size_t k = 0; k < cons.size(); ++k) {
      u64 entries = 1;
      std::vector<u64> st(cons[k].params.size());
      for (std::size_t j = cons[k].params.size(); j-- > 0;) {
        st[j] = entries;
        entries = mul_sat(entries, sizes[cons[k].params[j]]);
      }
      if (entries > kMemoEntries) continue;
      stride[k] = std::move(st);
      memo_size[k] = entries;
      if (entries <= kMemoAtOnce)
        memo[k].assign(entries, 0);
      else
        memo_after[k] = entries / 16;
    }
  }

  // ---- constraint checks --------------------------------------------------

  // True when the constraints before c can all hold with c's parameters at idx.
  bool earlier_allow(std::size_t c, std::span<const u32> idx) {
    SpaceSolver sub(sizes, std::vector<Constraint>(cons.begin(), cons.begin() + static_cast<std::ptrdiff_t>(c)));
    for (std::size_t v = 0; v < fixed.size(); ++v)
      if (fixed[v]) sub.fix(static_cast<u32>(v), *fixed[v]);
    for (std::size_t j = 0; j < idx.size(); ++j) sub.fix(cons[c].params[j], idx[j]);
    const bool any = sub.first().has_value();
    stats.evaluations += sub.stats().evaluations;
    return any;
  }

  bool evaluate(std::size_t c, std::span<const u32> idx) {
    ++stats.evaluations;
    try {
      return cons[c].holds(idx);
    } catch (const UsageError&) {
      if (earlier_allow(c, idx)) throw;
      return false;  // brute force never reaches these values: an earlier condition rules them out
    }
  }

  bool check(std::size_t c, std::span<const u32> idx) {
    ++stats.checks;
    if (memo[c].empty()) {
      if (memo_size[c] == 0 || memo_after[c]-- > 0) return evaluate(c, idx);
      memo[c].assign(memo_size[c], 0);
    }
    u64 key = 0;
    for (std::size_t j = 0; j < idx.size(); ++j) key += idx[j] * stride[c][j];
    std::uint8_t& m = memo[c][key];
    if (m == 0) m = evaluate(c, idx) ? 2 : 1;
    return m == 2;
  }

  // ---- domains --------------------------------------------------------------

  static bool any_bit(const u64* d, std::size_t n) {
    for (std::size_t w = 0; w < n; ++w)
      if (d[w]) return true;
    return false;
  }
  static u64 popcount(const u64* d, std::size_t n) {
    u64 c = 0;
    for (std::size_t w = 0; w < n; ++w) c += static_cast<u64>(__builtin_popcountll(d[w]));
    return c;
  }
  // Calls f(value) for each value in the domain (a copy of each word is read,
  // so f may clear bits).
  template <class F>
  static void each_value(u64* d, std::size_t n, F&& f) {
    for (std::size_t w = 0; w < n; ++w) {
      u64 bits = d[w];
      while (bits) {
        const auto b = static_cast<u32>(__builtin_ctzll(bits));
        bits &= bits - 1;
        if (!f(static_cast<u32>(w * 64 + b), d[w], b)) return;
      }
    }
  }

  // The domains before the search: the fixed values, then the constraints of
  // no parameter and of one (in the order given); false when one is empty.
  bool make_root() {
    root.assign(width, 0);
    for (std::size_t v = 0; v < sizes.size(); ++v) {
      u64* d = root.data() + offset[v];
      if (fixed[v]) {
        d[*fixed[v] / 64] |= u64{1} << (*fixed[v] % 64);
        continue;
      }
      for (u32 x = 0; x < sizes[v]; ++x) d[x / 64] |= u64{1} << (x % 64);
    }
    for (std::size_t c = 0; c < cons.size(); ++c) {
      if (cons[c].params.size() == 0 && !check(c, {})) return false;
      if (cons[c].params.size() != 1) continue;
      const u32 v = cons[c].params[0];
      u64* d = root.data() + offset[v];
      each_value(d, words[v], [&](u32 x, u64& word, u32 bit) {
        if (!check(c, std::span<const u32>(&x, 1))) word &= ~(u64{1} << bit);
        return true;
      });
      if (!any_bit(d, words[v])) return false;
    }
    return true;
  }

  bool ready() {
    if (!root_ready) {
      root_empty = !make_root();
      root_ready = true;
    }
    return !root_empty;
  }

  // ---- the order ----------------------------------------------------------

  // Per parameter, the constraints of two or more parameters that name it
  // and one of the parameters `placed`.
  std::vector<u32> shared_with(const std::vector<bool>& placed) const {
    std::vector<u32> shared(sizes.size(), 0);
    for (const auto& k : cons) {
      if (k.params.size() < 2) continue;
      if (std::any_of(k.params.begin(), k.params.end(), [&](u32 v) { return placed[v]; }))
        for (u32 v : k.params) ++shared[v];
    }
    return shared;
  }

  // Parameters with one value first, then the one sharing most constraints
  // with those ordered (the first in the parameters' order among equals: an
  // order close to theirs leaves less to sort), those in no constraint of
  // two or more parameters last.
  std::vector<u32> heuristic_order() const {
    const std::size_t n = sizes.size();
    std::vector<u32> order;
    std::vector<bool> placed(n, false), linked(n, false);
    for (const auto& k : cons)
      if (k.params.size() >= 2)
        for (u32 v : k.params) linked[v] = true;
    auto place = [&](u32 v) {
      order.push_back(v);
      placed[v] = true;
    };
    for (u32 v = 0; v < n; ++v)
      if (popcount(root.data() + offset[v], words[v]) == 1) place(v);
    for (;;) {
      const std::vector<u32> shared = shared_with(placed);
      std::optional<u32> best;
      for (u32 v = 0; v < n; ++v)
        if (!placed[v] && linked[v] && (!best || shared[v] > shared[*best])) best = v;
      if (!best) break;
      place(*best);
    }
    for (u32 v = 0; v < n; ++v)
      if (!placed[v]) place(v);
    return order;
  }

  // The share of combinations of its parameters' values that constraint c
  // allows: exact when its table is small (filled now: the search reads
  // it), else 1/2. Values it cannot evaluate are left for the search.
  double selectivity(std::size_t c) {
    auto& m = memo[c];
    if (cons[c].params.size() < 2 || m.empty() || m.size() > 4096) return 0.5;
    std::vector<u32> idx(cons[c].params.size());
    std::size_t known = 0, yes = 0;
    for (u64 key = 0; key < m.size(); ++key) {
      if (m[key] == 0) {
        u64 rest = key;
        for (std::size_t j = 0; j < idx.size(); ++j) {
          idx[j] = static_cast<u32>(rest / stride[c][j]);
          rest %= stride[c][j];
        }
        try {
          ++stats.evaluations;
          m[key] = cons[c].holds(idx) ? 2 : 1;
        } catch (const UsageError&) {
          continue;
        }
      }
      ++known;
      yes += m[key] == 2;
    }
    return known ? static_cast<double>(yes) / static_cast<double>(known) : 0.5;
  }

  // The search tree's size in this order by a simple model: each level
  // multiplies by its domain's size, and by the selectivity of each
  // constraint whose last parameter it binds (forward checking has cut
  // that parameter's domain).
  double tree_size(const std::vector<u32>& order, const std::vector<double>& sel) const {
    std::vector<std::size_t> pos(order.size());
    for (std::size_t l = 0; l < order.size(); ++l) pos[order[l]] = l;
    std::vector<double> factor(order.size(), 1.0);
    for (std::size_t c = 0; c < cons.size(); ++c) {
      if (cons[c].params.size() < 2) continue;
      std::size_t last = 0;
      for (u32 v : cons[c].params) last = std::max(last, pos[v]);
      factor[last] *= sel[c];
    }
    double level = 1, total = 0;
    for (std::size_t l = 0; l < order.size(); ++l) {
      level *= static_cast<double>(popcount(root.data() + offset[order[l]], words[order[l]])) * factor[l];
      total += level;
    }
    return total;
  }

  // The parameters' own order (those with one value first), which finds
  // the combinations in odometer order, unless the greedy order's tree is
  // estimated at less than half its size (then the combinations are sorted).
  std::vector<u32> search_order() {
    std::vector<u32> own;
    for (u32 v = 0; v < sizes.size(); ++v)
      if (popcount(root.data() + offset[v], words[v]) == 1) own.push_back(v);
    for (u32 v = 0; v < sizes.size(); ++v)
      if (popcount(root.data() + offset[v], words[v]) != 1) own.push_back(v);
    std::vector<u32> greedy = heuristic_order();
    if (greedy == own) return own;
    std::vector<double> sel(cons.size());
    for (std::size_t c = 0; c < cons.size(); ++c) sel[c] = selectivity(c);
    return tree_size(own, sel) <= 2 * tree_size(greedy, sel) ? own : greedy;
  }

  Plan plan(bool identity) {
    Plan p;
    const std::size_t n = sizes.size();
    if (identity) {
      for (u32 v = 0; v < n; ++v) p.order.push_back(v);
    } else {
      p.order = search_order();
    }
    std::vector<std::size_t> pos(n);
    for (std::size_t l = 0; l < n; ++l) pos[p.order[l]] = l;
    p.pos.assign(pos.begin(), pos.end());
    p.checks.resize(n);
    p.lookahead.resize(n);
    for (std::size_t c = 0; c < cons.size(); ++c) {
      const auto& ps = cons[c].params;
      if (ps.size() < 2) continue;
      // The last parameter bound is the target; the one bound before it triggers the check.
      std::size_t last = 0;
      for (std::size_t j = 1; j < ps.size(); ++j)
        if (pos[ps[j]] > pos[ps[last]]) last = j;
      std::size_t before = last == 0 ? 1 : 0;
      for (std::size_t j = 0; j < ps.size(); ++j)
        if (j != last && pos[ps[j]] > pos[ps[before]]) before = j;
      p.checks[pos[ps[before]]].push_back(Check{static_cast<u32>(c), static_cast<u32>(last), ps[last]});
      // While two or more stay unbound: the look-ahead at each of the others' levels.
      if (!cons[c].outlook) continue;
      for (std::size_t j = 0; j < ps.size(); ++j)
        if (j != last && j != before) p.lookahead[pos[ps[j]]].push_back(static_cast<u32>(c));
    }
    for (std::size_t l = 0; l < n; ++l)
      if (!p.checks[l].empty() || !p.lookahead[l].empty()) p.free_from = l + 1;
    return p;
  }

  // ---- the search -----------------------------------------------------------

  // Keeps the values of chk.var in `d` (the next level's domains) that
  // satisfy the constraint with the bound parameters (those up to `level`);
  // false when none is left.
  bool forward(const Plan& p, const Check& chk, std::size_t level, u64* d) {
    const auto& ps = cons[chk.c].params;
    std::span<u32> idx(scratch.data(), ps.size());
    for (std::size_t j = 0; j < ps.size(); ++j) idx[j] = assign[ps[j]];
    u64* dom = d + offset[chk.var];
    if (cons[chk.c].outlook && memo[chk.c].empty()) {  // no table (yet) remembers its answers
      make_views(p, chk.c, level, d);
      part.assign(words[chk.var], 0);
      views[chk.target] = DomainView{std::span<const u64>(part.data(), part.size()), -1};
      values.clear();
      each_value(dom, words[chk.var], [&](u32 x, u64&, u32) { return values.push_back(x), true; });
      bisect(chk, idx, dom, 0, values.size());
    } else {
      each_value(dom, words[chk.var], [&](u32 x, u64& word, u32 bit) {
        idx[chk.target] = x;
        if (!check(chk.c, idx)) word &= ~(u64{1} << bit);
        return true;
      });
    }
    return any_bit(dom, words[chk.var]);
  }

  // Forward checking of values[lo, hi) by halves: a part the look-ahead
  // rejects goes, one it accepts stays, a single value it cannot decide is
  // checked. The views are made; the last parameter's reads `part`.
  void bisect(const Check& chk, std::span<u32> idx, u64* dom, std::size_t lo, std::size_t hi) {
    auto drop = [&](std::size_t k) { dom[values[k] / 64] &= ~(u64{1} << (values[k] % 64)); };
    if (hi - lo <= 2) {  // as cheap to check as to ask
      for (std::size_t k = lo; k < hi; ++k) {
        idx[chk.target] = values[k];
        if (!check(chk.c, idx)) drop(k);
      }
      return;
    }
    std::fill(part.begin(), part.end(), 0);
    for (std::size_t k = lo; k < hi; ++k) part[values[k] / 64] |= u64{1} << (values[k] % 64);
    const Outlook o = ask(chk.c);
    if (o == Outlook::never)
      for (std::size_t k = lo; k < hi; ++k) drop(k);
    if (o != Outlook::maybe) return;
    const std::size_t mid = lo + (hi - lo) / 2;
    bisect(chk, idx, dom, lo, mid);
    bisect(chk, idx, dom, mid, hi);
  }

  // The look-ahead's views of constraint c's parameters: those bound up to
  // `level` their one value, the others their domains in `d`.
  void make_views(const Plan& p, u32 c, std::size_t level, const u64* d) {
    const auto& ps = cons[c].params;
    for (std::size_t j = 0; j < ps.size(); ++j) {
      const u32 v = ps[j];
      views[j] = p.pos[v] <= level ? DomainView{{}, static_cast<std::int64_t>(assign[v])}
                                   : DomainView{std::span<const u64>(d + offset[v], words[v]), -1};
    }
  }

  Outlook ask(u32 c) {
    ++stats.lookaheads;
    return cons[c].outlook(std::span<const DomainView>(views.data(), cons[c].params.size()));
  }

  // False when constraint c's look-ahead rules out every choice left: the
  // parameters bound up to `level` hold their values, the others the
  // domains `d`.
  bool look_ahead(const Plan& p, u32 c, std::size_t level, const u64* d) {
    make_views(p, c, level, d);
    if (ask(c) != Outlook::never) return true;
    ++stats.pruned;
    return false;
  }

  // Binds the level's variable to each value in turn (its domain among the
  // level's domains `d`), forward checks into the next level's, and goes
  // deeper; emit(assign) at the leaves returns false to stop. Levels from
  // free_from trigger no check: they share one set of domains, uncopied.
  template <class Emit>
  bool dfs(const Plan& p, std::size_t level, u64* d, std::vector<u64>& doms, Emit& emit) {
    const u32 var = p.order[level];
    const bool last = level + 1 == p.order.size();
    bool go = true;
    each_value(d + offset[var], words[var], [&](u32 x, u64&, u32) {
      ++stats.nodes;
      assign[var] = x;
      if (last) return go = emit(assign);
      u64* next = d;
      if (level + 1 <= p.free_from) {
        next = doms.data() + (level + 1) * width;
        std::memcpy(next, d, width * sizeof(u64));
        for (const Check& chk : p.checks[level])
          if (!forward(p, chk, level, next)) return true;
        for (u32 c : p.lookahead[level])
          if (!look_ahead(p, c, level, next)) return true;
      }
      return go = dfs(p, level + 1, next, doms, emit);
    });
    return go;
  }

  template <class Emit>
  void search(const Plan& p, Emit& emit) {
    if (!ready()) return;
    if (sizes.empty()) {
      emit(assign);
      return;
    }
    std::vector<u64> doms((sizes.size() + 1) * width);
    std::copy(root.begin(), root.end(), doms.begin());
    dfs(p, 0, doms.data(), doms, emit);
  }

  // The parameters with more than one value in their own order, and how
  // many of them the plan binds first in that order (the search finds the
  // combinations in odometer order of those).
  std::pair<std::size_t, std::vector<u32>> agreement(const Plan& p) const {
    std::vector<u32> free_vars;
    for (u32 v : p.order)
      if (popcount(root.data() + offset[v], words[v]) > 1) free_vars.push_back(v);
    std::vector<u32> own = free_vars;
    std::sort(own.begin(), own.end());
    std::size_t agree = 0;
    while (agree < own.size() && own[agree] == free_vars[agree]) ++agree;
    return {agree, std::move(own)};
  }

  u64 count_dfs(const Plan& p, std::size_t level, std::vector<u64>& doms) {
    u64* d = doms.data() + level * width;
    if (level >= p.free_from) {
      u64 total = 1;
      for (std::size_t l = level; l < p.order.size(); ++l)
        total = mul_sat(total, popcount(d + offset[p.order[l]], words[p.order[l]]));
      return total;
    }
    const u32 var = p.order[level];
    u64 total = 0;
    each_value(d + offset[var], words[var], [&](u32 x, u64&, u32) {
      ++stats.nodes;
      assign[var] = x;
      u64* next = doms.data() + (level + 1) * width;
      std::memcpy(next, d, width * sizeof(u64));
      for (const Check& chk : p.checks[level])
        if (!forward(p, chk, level, next)) return true;
      for (u32 c : p.lookahead[level])
        if (!look_ahead(p, c, level, next)) return true;
      total = add_sat(total, count_dfs(p, level + 1, doms));
      return true;
    });
    return total;
  }
};

SpaceSolver::SpaceSolver(std::vector<std::uint32_t> sizes, std::vector<Constraint> constraints)
    : impl_(std::make_unique<Impl>(std::move(sizes), std::move(constraints))) {}
SpaceSolver::SpaceSolver(SpaceSolver&&) noexcept = default;
SpaceSolver& SpaceSolver::operator=(SpaceSolver&&) noexcept = default;
SpaceSolver::~SpaceSolver() = default;

void SpaceSolver::fix(std::uint32_t k, std::uint32_t v) {
  if (k >= impl_->sizes.size() || v >= impl_->sizes[k]) throw std::invalid_argument("SpaceSolver::fix out of range");
  impl_->fixed[k] = v;
  impl_->root_ready = false;
}

// Rows straight into place when the search binds the parameters with more
// than one value in their own order (then it finds them in odometer order);
// else each combination's odometer rank, sorted and decoded at the end (8
// bytes a combination while solving); beyond 2^64 combinations, rows sorted.
ParameterSets SpaceSolver::solve() {
  Impl& m = *impl_;
  ParameterSets rows(m.sizes);
  if (!m.ready()) return rows;
  const Plan p = m.plan(false);
  const auto [agree, own] = m.agreement(p);
  const auto strides = ParameterSets::rank_strides(m.sizes);
  if (agree == own.size() || !strides) {
    auto emit = [&](const std::vector<u32>& a) {
      rows.push_back(a);
      return true;
    };
    m.search(p, emit);
    rows.sort();
    return rows;
  }
  std::vector<u64> ranks;
  auto emit = [&](const std::vector<u32>& a) {
    u64 key = 0;
    for (std::size_t k = 0; k < a.size(); ++k) key += a[k] * (*strides)[k];
    ranks.push_back(key);
    return true;
  };
  m.search(p, emit);
  // Found in order of the agreeing parameters: only the ranks that share
  // their values (a rank divided by the last one's weight) need sorting.
  const u64 group = agree == 0 ? 0 : (*strides)[own[agree - 1]];
  return ParameterSets::from_ranks(m.sizes, std::move(ranks), group);
}

void SpaceSolver::for_each(const std::function<bool(std::span<const std::uint32_t>)>& visit) {
  if (!impl_->ready()) return;
  const Plan p = impl_->plan(false);
  auto emit = [&](const std::vector<u32>& a) { return visit(a); };
  impl_->search(p, emit);
}

std::uint64_t SpaceSolver::count() {
  if (!impl_->ready()) return 0;
  if (impl_->sizes.empty()) return 1;
  const Plan p = impl_->plan(false);
  std::vector<u64> doms((impl_->sizes.size() + 1) * impl_->width);
  std::copy(impl_->root.begin(), impl_->root.end(), doms.begin());
  return impl_->count_dfs(p, 0, doms);
}

std::optional<std::vector<std::uint32_t>> SpaceSolver::first() {
  std::optional<std::vector<u32>> found;
  if (!impl_->ready()) return found;
  const Plan p = impl_->plan(true);
  auto emit = [&](const std::vector<u32>& a) {
    found = a;
    return false;
  };
  impl_->search(p, emit);
  return found;
}

const SolverStats& SpaceSolver::stats() const noexcept {
  return impl_->stats;
}

}  // namespace wstune
