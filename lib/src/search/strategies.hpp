#pragma once
/// @file strategies.hpp
/// Search strategies for large constrained discrete spaces (10^3–10^5
/// configurations of tuning parameters × local sizes), behind the Searcher
/// interface of search.hpp, and "auto", which picks a strategy by the size
/// of the space. Every strategy proposes only indices of the SearchSpace
/// (which holds only configurations that satisfy the constraints) and never
/// the same configuration twice within one tune(): children, mutations and
/// surrogate picks are repaired to the nearest unmeasured configuration of
/// the space. Sources: Schoonhoven, van Werkhoven and Batenburg,
/// "Benchmarking optimization algorithms for auto-tuning GPU kernels", IEEE
/// TEVC 2022 (a genetic algorithm and dual/simulated annealing among the
/// strongest of 16 strategies on 26 GPU kernel spaces); Willemsen, van
/// Nieuwpoort and van Werkhoven, "Bayesian Optimization for auto-tuning GPU
/// kernels", PMBS 2021 (a surrogate model ahead at small budgets); Hutter,
/// Hoos and Leyton-Brown, "Sequential Model-Based Optimization for General
/// Algorithm Configuration" (SMAC), LION 2011 (a random-forest surrogate
/// over discrete and categorical parameters); Geurts, Ernst and Wehenkel,
/// "Extremely randomized trees", Machine Learning 63, 2006. See
/// docs/tuning.md for the measured comparison.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "search/search.hpp"
#include "space/search_space.hpp"

namespace wstune {

/// A steady-state genetic algorithm over configurations (after Kernel
/// Tuner's constraint-aware genetic algorithm, Schoonhoven et al. 2022): the
/// first proposal is the start point (below), the next `population` − 1 are
/// random; then each proposal
/// is a child of two parents picked by binary tournament among the
/// `population` fastest measured configurations: uniform crossover of the
/// genes (one gene per tuning parameter's value index, one for the local
/// size), each gene mutated with probability 1/genes (a parameter moves one
/// value index up or down, two times in three, or takes any value; the local
/// size moves one power of two in x, y or z), and the child repaired to the
/// nearest unmeasured configuration of the space (so it satisfies the
/// constraints). One in eight proposals is an unmeasured neighbour
/// (SearchSpace::neighbours) of the best. Failed configurations are never
/// parents. `population` 0 picks clamp(size / 50, 8, 24).
std::unique_ptr<Searcher> make_genetic_searcher(std::uint64_t seed, std::size_t population = 0);

/// Simulated annealing over SearchSpace::neighbours(). It measures the start
/// point (below) and then 4 random configurations (scouts), and descends
/// from the fastest of them: from the current configuration an unmeasured
/// neighbour is proposed, drawn gene first (a tuning parameter, or the local
/// size, uniformly among those some neighbour changes; then one of that
/// gene's neighbours), so the local size's many lattice moves do not crowd
/// out the parameters' two each; it becomes current when faster,
/// or when slower by Δ = ln(t_new / t_current) with probability
/// exp(−Δ / T); T falls geometrically from 0.5 by a factor of 0.97 per
/// proposal (to 0.001). When every neighbour of the current one is measured,
/// the search goes on from an unmeasured neighbour of one of the three
/// fastest; when theirs are measured too, up to 32 proposals are wider moves
/// around them (Encoding's Hamming and adjacent neighbourhoods: one parameter
/// to any value, or every parameter within one value index), then a new
/// descent starts from a random unmeasured configuration (iterated local
/// search with restarts, for landscapes whose best basin is not the first
/// one found).
std::unique_ptr<Searcher> make_annealing_searcher(std::uint64_t seed);

/// Differential evolution (DE/best/1/bin; Storn and Price, J. Global
/// Optimization 11, 1997; as Kernel Tuner's diff_evo) over the feature rows
/// (value indices; log2 of the local extents). The first population is the
/// start point (below) and a Latin hypercube sample of the features'
/// ranges (every value equally likely), each point repaired to the nearest
/// unmeasured configuration. Each generation then draws, for every member
/// i, a trial vector that takes each gene (one at least) with probability
/// 0.6 from the donor best + 0.7·(b − c) (best the fastest member, b and c
/// two other members; rounded and clipped to each feature's range) and the
/// others from member i, repaired to the nearest configuration of the space
/// (none twice in a generation). A trial already measured is not proposed
/// (its time is known, no evaluation spent); after the generation each
/// correct trial not slower than member i and not a member yet replaces
/// it. After three generations without a replacement the next generation
/// is a new Latin hypercube sample of unmeasured configurations, competing
/// member by member. Population: clamp(per_gene × genes, 8, max(8, size /
/// 20)) (Kernel Tuner: 16 per tuning parameter). upcoming() announces the
/// rest of the generation (its proposals do not depend on the reports), so
/// tune() builds their programs ahead and wstuned's workers measure them at
/// once.
std::unique_ptr<Searcher> make_differential_searcher(std::uint64_t seed, std::size_t per_gene = 16);

/// An algorithm portfolio: simulated annealing (above) proposes until 1 %
/// of the space has been proposed; from then on, whenever 60 of annealing's
/// proposals in a row have not improved the fastest time found, proposals
/// go to a differential evolution (above, 4 per gene) until a trial
/// improves it, which hands them back to annealing. Both hear every trial,
/// so neither proposes what the other measured; the evolution's donors come
/// from its own population. Annealing descends fast into the first good
/// basin; the evolution's Latin hypercube samples and clipped donors reach
/// the corners of the space where a landscape's best basin can lie
/// (docs/results/strategies_tables.md, synthetic-10k-rugged). upcoming():
/// the evolution's announcement while it proposes, else nothing.
std::unique_ptr<Searcher> make_portfolio_searcher(std::uint64_t seed);

/// Sequential model-based search (Bayesian optimisation with a tree-ensemble
/// surrogate, after SMAC). Features of a configuration: each parameter's
/// value index, and the local size's log2 x, y, z and work-items (−1 for
/// NULL). The first proposal is the start point (below), then an initial
/// design up to max(5, features + 1) configurations (at most 1 % of the
/// space + 5): alternately the parameter set of the fastest configuration
/// so far at its open shape prior_order() ranks first (the device model's
/// shapes in turn, so the surrogate sees the local size vary where the
/// optimum most likely lies) and a random configuration's parameter set at
/// its own first open shape (so it sees the parameters vary). After
/// that each proposal maximises the expected improvement of ln(time) under
/// 16 extremely randomized regression trees fitted to every measured configuration (mean and spread
/// over the trees; a failure counts as twice the slowest correct time):
/// every other proposal over the unmeasured configurations one move from
/// the three fastest (one gene changed to any value, or every parameter
/// within one value index and every local dimension within one power of two:
/// Kernel Tuner's Hamming and adjacent neighbourhoods), the others over all
/// unmeasured configurations (at most 4096 drawn at random in larger spaces,
/// plus the open SearchSpace::neighbours of the five fastest). Every tenth
/// proposal is random (exploration).
std::unique_ptr<Searcher> make_bayes_searcher(std::uint64_t seed);

/// The start point of genetic, annealing, differential and bayes: when the baseline runs
/// the driver's choice (NULL local size) and its parameter set has shapes,
/// the shape prior_order() (search.hpp) ranks first in that set (the
/// baseline's parameters with a settable local size); otherwise the
/// configuration nearest to the baseline (L1 over the features: value
/// indices and log2 local extents, scaled by their ranges).

/// The strategy "auto" picks for `space`: "exhaustive" for at most 16
/// configurations; "guided" for a space of local sizes only (no tuning
/// parameters) of fewer than 1,000 configurations; "portfolio" for 1,000 or
/// more; "bayes" otherwise (fewer than 1,000 with tuning parameters).
/// Measured in docs/results/strategies_tables.md.
std::string_view auto_strategy(const SearchSpace& space);

/// "auto": the strategy of auto_strategy() for the space given to
/// initialize(); name() is "auto" before initialize() and "auto:STRATEGY"
/// after it; rule_first() and upcoming() are the chosen one's.
std::unique_ptr<Searcher> make_auto_searcher(std::uint64_t seed);

/// The number of evaluations (the baseline included) that `wstune tune`
/// allows a strategy by default on `space`: unlimited (0) for
/// "exhaustive", "random" and "rule"; max(8, 20 % of the space) for
/// "guided"; max(20, 5 % of the space) for "genetic", "annealing",
/// "differential", "portfolio" and "bayes" (the target: within 5 % of the optimum with 5 % of the
/// evaluations); for "auto" that of the strategy it picks.
unsigned default_evaluations(std::string_view strategy, const SearchSpace& space);

}  // namespace wstune
