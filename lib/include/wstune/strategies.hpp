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

#include "wstune/search.hpp"
#include "wstune/search_space.hpp"

namespace wstune {

/// A steady-state genetic algorithm over configurations: the first
/// `population` proposals are random configurations; then each proposal is a
/// child of two parents picked by binary tournament among the `population`
/// fastest measured configurations: uniform crossover of the genes (one
/// gene per tuning parameter's value index, one for the local size), each
/// gene mutated with probability 1/genes (one value index up or down, or
/// any value), and the child repaired to the nearest unmeasured
/// configuration of the space (so it satisfies the constraints). One in
/// eight proposals is an unmeasured neighbour of the best (SearchSpace::neighbours).
/// Failed configurations rank last. `population` 0 picks
/// clamp(size / 50, 8, 24).
std::unique_ptr<Searcher> make_genetic_searcher(std::uint64_t seed, std::size_t population = 0);

/// Simulated annealing over SearchSpace::neighbours(): from the current
/// configuration, an unmeasured neighbour is proposed; it becomes current
/// when faster, or slower by Δ = ln(t_new / t_current) with probability
/// exp(−Δ / T); T falls geometrically from 0.5 by a factor of 0.97 per
/// proposal. When every neighbour of the current one is measured, the
/// search restarts from the best measured configuration's unmeasured
/// neighbours, else from a random unmeasured configuration.
std::unique_ptr<Searcher> make_annealing_searcher(std::uint64_t seed);

/// Sequential model-based search (Bayesian optimisation with a tree-ensemble
/// surrogate, after SMAC): after an initial design of random configurations
/// (max(10, 2 × features), at most 1 % of the space plus 10), each proposal
/// maximises the expected improvement of ln(time) under an ensemble of
/// extremely randomized regression trees fitted to every measured
/// configuration (mean and spread over the trees; failures count as twice
/// the slowest time), over all unmeasured configurations (at most 4096 of
/// them drawn at random in larger spaces, plus every unmeasured neighbour of
/// the five fastest). One in ten proposals is random (exploration). The
/// features are each parameter's value index, the local size's log2 extents
/// and log2 work-items (−1 for NULL).
std::unique_ptr<Searcher> make_bayes_searcher(std::uint64_t seed);

/// The strategy "auto" picks for `space`: "exhaustive" for at most 16
/// configurations; "guided" for a space of local sizes only (no tuning
/// parameters) of fewer than 1,000 configurations; "bayes" otherwise.
std::string_view auto_strategy(const SearchSpace& space);

/// "auto": the strategy of auto_strategy() for the space given to
/// initialize(); name() is "auto" before initialize() and "auto:STRATEGY"
/// after it; rule_first() is the chosen one's.
std::unique_ptr<Searcher> make_auto_searcher(std::uint64_t seed);

/// The number of evaluations (the baseline included) that `wstune tune`
/// allows a strategy by default on `space`: unlimited (0) for
/// "exhaustive", "random" and "rule"; max(8, 20 % of the space) for
/// "guided"; max(20, 5 % of the space) for "genetic", "annealing" and
/// "bayes" (the target: within 5 % of the optimum with 5 % of the
/// evaluations); for "auto" that of the strategy it picks.
unsigned default_evaluations(std::string_view strategy, const SearchSpace& space);

}  // namespace wstune
