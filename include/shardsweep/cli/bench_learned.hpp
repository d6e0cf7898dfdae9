#pragma once
//! \file bench_learned.hpp
//! \brief The error table shared by `bench ops` and `bench gemm --table learned`: per GPU and
//! subset, the learned model left out of that GPU's training (leave-one-GPU-out) and the model
//! trained without the unseen-shape rows, each next to the analytic model on the same rows.

#include <shardsweep/io/table_output.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

struct LearnedSplitErrors
{
    std::size_t rows = 0;
    std::size_t shape_rows = 0;
    double logo_learned = 0.0, logo_analytic = 0.0;     //!< MAPE %, all selected rows
    double shapes_learned = 0.0, shapes_analytic = 0.0; //!< MAPE %, selected held-out shapes
};

//! Errors over the rows with select[i]: `logo` vs `analytic` on all of them, `shapes` vs
//! `analytic` on those with held[i].
LearnedSplitErrors
learnedSplitErrors( const std::vector<double>& meas, const std::vector<double>& logo,
                    const std::vector<double>& shapes, const std::vector<double>& analytic,
                    const std::vector<char>& held, const std::vector<char>& select );
ResultTable learnedErrorTable();
void addLearnedRows( ResultTable& t, const std::string& gpu, const std::string& subset,
                     const LearnedSplitErrors& e );

} // namespace shardsweep
