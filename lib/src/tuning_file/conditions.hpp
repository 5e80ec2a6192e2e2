#pragma once
/// @file conditions.hpp
/// T1 Conditions as the space solver's constraints (space/solver.hpp): each
/// condition compiled once (expr/compiled.hpp) against the tuning
/// parameters it reads, its other names (ProblemSize, wstune.Sizes
/// variables) bound to the problem's numbers. Source: the T1 schema's
/// ConfigurationSpace.Conditions (an Expression over the Parameters it
/// names; Kernel Tuner's restrictions), docs/tuning-files.md.

#include <string>
#include <vector>

#include "expr/expression.hpp"
#include "space/solver.hpp"
#include "wstune/configuration.hpp"

namespace wstune::t1 {

/// The tuning parameters (indices, ascending) that expression `e` reads:
/// those whose names it uses, and any named like a builtin (a call would
/// find the binding).
std::vector<std::uint32_t> read_parameters(const std::vector<TuningParameter>& parameters, const expr::Expression& e);

/// One constraint per condition, in order. A condition reads the parameters
/// whose names it uses (and any parameter named like a builtin, which a call
/// would find); `constants` binds every other name. A condition that cannot
/// be evaluated throws UsageError "FILE: ConfigurationSpace.Conditions[K].Expression:
/// ERROR (with VALUES)", VALUES being the parameters it reads.
/// @param parameters the tuning parameters (T1 TuningParameters)
/// @param conditions the parsed Conditions' Expressions
/// @param constants the non-parameter names (size_bindings())
/// @param file the tuning file's path, for messages
std::vector<Constraint> condition_constraints(const std::vector<TuningParameter>& parameters,
                                              const std::vector<expr::Expression>& conditions,
                                              const expr::Env& constants, const std::string& file);

}  // namespace wstune::t1
