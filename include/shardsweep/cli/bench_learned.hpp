#pragma once
//! \file bench_learned.hpp
//! \brief The error table shared by `bench ops` and `bench gemm --table learned`: per GPU and
//! subset, next to the analytic model on the same rows, the learned model
//!  - left out of that GPU's training (leave-one-GPU-out),
//!  - trained without the unseen-shape rows (B+M+N+K or B+H a multiple of 5), on them,
//!  - trained without each GPU's largest shapes (largestShapes), on them: the test that decides
//!    on which GPUs the shipped model is the default (its file's default_for line).

#include <shardsweep/io/operator_models.hpp>
#include <shardsweep/io/table_output.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! The model files a learned table reads besides the leave-one-GPU-out folds:
//! <dir>/logo/<family>_unseen_shapes.mlp, <dir>/logo/<family>_without_largest.mlp and the shipped
//! <dir>/<family>.mlp (whose default_for line the table reports).
struct LearnedFoldModels
{
    LearnedOperatorModel unseen_shapes, without_largest, shipped;
};
LearnedFoldModels loadLearnedFoldModels( const std::string& dir, const std::string& family,
                                         LearnedOperatorModel ( *load )( const std::string& ) );

//! One GPU's rows: measured latencies and each model's predictions, ms.
struct LearnedPredictions
{
    std::vector<double> measured;
    std::vector<double> logo;     //!< trained without this GPU
    std::vector<double> shapes;   //!< trained without the unseen-shape rows
    std::vector<double> largest;  //!< trained without every GPU's largest shapes
    std::vector<double> analytic; //!< the analytic model
    std::vector<char> unseen_shape, largest_shape;
};

struct LearnedSplitErrors
{
    std::size_t rows = 0, shape_rows = 0, largest_rows = 0;
    double logo_learned = 0.0, logo_analytic = 0.0;       //!< MAPE %, all selected rows
    double shapes_learned = 0.0, shapes_analytic = 0.0;   //!< MAPE %, selected unseen shapes
    double largest_learned = 0.0, largest_analytic = 0.0; //!< MAPE %, selected largest shapes
};

//! The share of a GPU's rows held out as its largest shapes.
constexpr double kLargestShapesQuantile = 0.8;
//! Rows whose size (B·M·N·K or B·H) is at least the value at index floor(0.8 n) of the sorted
//! sizes: one GPU's largest fifth (postprocess/train_operator_model.py selects the same rows).
std::vector<char> largestShapes( const std::vector<double>& size );

//! Errors over the rows with select[i], each learned variant next to the analytic model.
LearnedSplitErrors learnedSplitErrors( const LearnedPredictions& p,
                                       const std::vector<char>& select );
ResultTable learnedErrorTable();
//! One row; `default_model` (the shipped model's choice for this GPU) only on the subset "all".
void addLearnedRows( ResultTable& t, const std::string& gpu, const std::string& subset,
                     const LearnedSplitErrors& e, const std::string& default_model = "" );

} // namespace shardsweep
