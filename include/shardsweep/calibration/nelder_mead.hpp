#pragma once
//! \file nelder_mead.hpp
//! \brief Derivative-free minimisation for the calibration fits (GEMM and operator constants):
//! Nelder–Mead, restarted with a shrinking simplex. Deterministic and single-threaded.

#include <functional>
#include <vector>

namespace shardsweep
{

using FitObjective = std::function<double( const std::vector<double>& )>;

//! Minimises `f` by Nelder–Mead (reflection 1, expansion 2, contraction and shrink 0.5) from the
//! simplex of `y0` and y0 + step along each axis. Stops when the simplex's values span less than
//! 1e-7 or when `used` (incremented per evaluation) reaches `budget`. Returns the best point;
//! `best_value` is its value.
std::vector<double> nelderMead( const FitObjective& f, const std::vector<double>& y0, double step,
                                int budget, int& used, double& best_value );

//! Nelder–Mead restarted from its best point with steps 0.5, 0.25, 0.1 and 0.05 (restarts escape
//! the premature collapse Nelder–Mead is known for). `best_value` must hold f(y0) on entry;
//! returns the best point found, never worse than y0.
std::vector<double> nelderMeadWithRestarts( const FitObjective& f, std::vector<double> y0,
                                            int budget, int& used, double& best_value );

} // namespace shardsweep
