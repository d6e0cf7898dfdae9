#pragma once
//! \file transformer_fit.hpp
//! \brief Measured transformer iterations (vTrain's Megatron-DeepSpeed runs, NeuSight's
//! single-GPU HuggingFace runs), the model's prediction for each, error statistics and the fit
//! of TransformerConstants (docs/model/transformer.md, docs/MODEL.md).
//!
//! The fit minimises the mean |log(predicted / measured)| by Nelder–Mead on the logarithms of the
//! constants it varies (all positive), restarted from its best point until it stops improving.
//! Deterministic and single-threaded.
#include <shardsweep/model/transformer.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! One measured step with everything needed to predict it.
struct TransformerMeasurement
{
    std::string set; //!< "vtrain_single", "vtrain_multi", "neusight"
    std::string gpu; //!< GPU name as the data file spells it
    std::string label;
    int line = 0; //!< line in the data file
    Platform platform;
    TransformerSpec model;
    ParallelConfig config;
    double measured_ms = 0.0;
    //! NeuSight's step has no optimizer: the prediction leaves it out.
    bool without_optimizer = false;
    //! What NeuSight's timing leaves out (measure_e2e in sitar-lab/NeuSight's
    //! neusight/Tracing/trace.py), left out of the prediction too; exact for its one-GPU,
    //! one-micro-batch steps. It times the model's forward and `loss.backward()`, and computes
    //! the cross-entropy between them: the loss's forward is untimed.
    bool without_loss_forward = false;
    //! Its BERT inference runs AutoModelForSequenceClassification: a pooler and a two-class
    //! classifier on the [CLS] rows (under 0.1 % of the step, left out too) instead of the LM
    //! head of its training runs (AutoModelForPreTraining).
    bool without_lm_head = false;
};

//! vTrain's ground-truth rows (inputs/measured/transformer/vtrain_*_dev.csv): GPT, fp16, full
//! recompute, 1F1B, vocabulary 50257, Megatron's fused softmax (fused = false: no FlashAttention),
//! on `platform`.
std::vector<TransformerMeasurement>
readVtrainMeasurements( const std::string& path, const std::string& set, const Platform& platform );

//! NeuSight's end-to-end rows (neusight_e2e_dev.csv): one GPU from `catalog_dir`, fp32 eager,
//! batch = micro-batch = global batch. Rows of models without a dense-transformer spec
//! (switchxl4, a mixture of experts) are skipped.
std::vector<TransformerMeasurement> readNeusightMeasurements( const std::string& path,
                                                              const std::string& catalog_dir );

//! The model's prediction for a measurement, ms.
double predictMeasurement( const TransformerConstants& c, const TransformerMeasurement& m,
                           const GemmConstants& gemm = shippedGemmConstants() );

//! Mean |pred − measured| / measured in % over `rows`.
double transformerMape( const TransformerConstants& c,
                        const std::vector<TransformerMeasurement>& rows );

//! Constants the fit may vary, by index into the array form.
constexpr int kTransformerNumConstants = 12;
void transformerConstantsToArray( const TransformerConstants& c, double* x );
TransformerConstants transformerConstantsFromArray( const double* x );
const char* transformerConstantName( int i );

struct TransformerFitResult
{
    TransformerConstants constants;
    double objective = 0.0; //!< mean |log(pred/measured)| at the optimum
    int evaluations = 0;
};

//! Nelder–Mead from `start`, varying the constants whose `vary[i]` is true.
TransformerFitResult fitTransformerConstants( const TransformerConstants& start,
                                              const std::vector<TransformerMeasurement>& rows,
                                              const bool* vary, int max_evaluations );

//! Absolute percentage errors of the all-reduce model on `n` NVSwitch GPUs of `platform` against
//! nccl-tests' measurements (<data_dir>/nccl_tests_a100/all_reduce_<n>gpu.csv: size(B),
//! time(ns)), one per row.
std::vector<double> ncclAllReduceApe( const std::string& data_dir, const Platform& platform,
                                      int n );

} // namespace shardsweep
