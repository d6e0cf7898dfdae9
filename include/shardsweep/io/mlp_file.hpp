#pragma once
//! \file mlp_file.hpp
//! \brief The shardsweep-mlp model file (text): reading, writing, checking, loading into Views.
//!
//! One keyword per line, numbers separated by blanks, `#` comments (docs/model/
//! learned_operators.md has the full grammar):
//!
//!   shardsweep-mlp 1                   format version
//!   family gemm                        gemm | ops | dlrm (which features the inputs are)
//!   target log_latency_over_analytic   what the output means (documentation only)
//!   inputs 18
//!   names log2_B log2_M ...            one name per input
//!   mean ... / scale ...               z-score of each input: (x - mean) / scale
//!   input_min ... / input_max ...      optional: each input's range over the training rows;
//!                                      inputs are clamped into it before the z-score
//!   output_min 0                       clamp of the output (-1e300: none)
//!   trained_on P4 T4 ...               GPUs (catalog names) the model was trained on
//!   default_for P4 ...                 optional: the trained GPUs on which it is the default,
//!                                      because it beat the analytic model out of distribution
//!   layers 3
//!   layer relu 18 32                   activation, inputs, outputs; then
//!   weights ...                        outputs x inputs numbers, row-major by output
//!   bias ...                           outputs numbers
//!   check x_1 ... x_n y                optional: raw inputs and the trainer's output
//!   end
//!
//! Every error names the file, the line and the field. Reading verifies each `check` record
//! against the reference evaluation (mlpReferenceEvaluate) within 1e-9 relative.

#include <iosfwd>
#include <shardsweep/model/mlp.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

constexpr int kMlpFileVersion = 1;

struct MlpFileLayer
{
    MlpActivation activation = MlpActivation::relu;
    int inputs = 0;
    int outputs = 0;
    std::vector<double> weights; //!< outputs × inputs, row-major by output
    std::vector<double> bias;
};

struct MlpFile
{
    std::string path; //!< where it was read from (error messages)
    int version = kMlpFileVersion;
    std::string family;
    std::string target;
    std::vector<std::string> names;
    std::vector<double> mean;
    std::vector<double> scale;
    std::vector<double> input_min; //!< empty, or one per input (with input_max)
    std::vector<double> input_max;
    double output_min = -1.0e300;
    std::vector<std::string> trained_on;
    std::vector<std::string> default_for; //!< a subset of trained_on
    std::vector<MlpFileLayer> layers;
    std::vector<std::vector<double>> check_inputs;
    std::vector<double> check_outputs;
};

//! Parses `text` (named `name` in errors); throws InputError naming line and field.
MlpFile parseMlpFile( const std::string& text, const std::string& name );
//! Reads and parses a file; throws InputError.
MlpFile readMlpFile( const std::string& path );
//! Writes `m` in the same format (numbers with 17 significant digits: the round trip is exact).
void writeMlpFile( std::ostream& out, const MlpFile& m );

//! Throws InputError unless the file's family is `family` and its inputs are exactly `names`.
void requireMlpFeatures( const MlpFile& m, const std::string& family, const char* const* names,
                         int count );

//! Plain host evaluation with std::vector, independent of mlpEvaluate (tests, check records).
double mlpReferenceEvaluate( const MlpFile& m, const std::vector<double>& x );

//! Flattens the parameters into one array and fills the layout with their offsets.
std::vector<double> packMlp( const MlpFile& m, MlpLayout& layout );

//! Loads the parameters into a View of the default memory space (once per run).
MlpModel<> loadMlpModel( const MlpFile& m );

//! $SHARDSWEEP_MODEL_DIR if set, else <source>/inputs/models if it exists, else the installed
//! <datadir>/shardsweep/inputs/models.
std::string defaultModelDir();

} // namespace shardsweep
