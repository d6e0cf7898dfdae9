#pragma once
//! \file mlp.hpp
//! \brief A small dense multilayer perceptron evaluated inside Kokkos kernels.
//!
//! The learned models (learned_operator.hpp; the file format in io/mlp_file.hpp and
//! docs/model/learned_operators.md) are plain MLPs: z-scored inputs, dense layers with ReLU
//! between them, one linear output. All parameters live in one flat array (a Kokkos View filled
//! once per run); MlpLayout is a plain struct of offsets into it, copied by value into kernels.
//! mlpEvaluate works on two fixed-size stack buffers: no allocation, no std containers.

#include <Kokkos_Core.hpp>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/model/math.hpp>

namespace shardsweep
{

constexpr int kMlpMaxLayers = 6;  //!< dense layers, output layer included
constexpr int kMlpMaxWidth = 128; //!< widest layer (inputs included; NeuroShard-style 128-32)
constexpr int kMlpMaxInputs = 32; //!< feature vector length

enum class MlpActivation : unsigned char
{
    identity = 0,
    relu = 1,
};

// A `layer` line of a shardsweep-mlp file names its activation.
SHARDSWEEP_ENUM_NAMES( MlpActivation, "activation",
                       { MlpActivation::identity, "identity", "y = W*h + b (the output layer)" },
                       { MlpActivation::relu, "relu", "y = max(0, W*h + b)" } );

//! Shape of an MLP and where its parameters sit in the flat parameter array.
struct MlpLayout
{
    int num_layers = 0;
    int width[kMlpMaxLayers + 1] = {}; //!< width[0] = inputs, width[l+1] = outputs of layer l
    MlpActivation activation[kMlpMaxLayers] = {};
    int weights[kMlpMaxLayers] = {}; //!< offset of layer l's weights, row-major [output][input]
    int bias[kMlpMaxLayers] = {};    //!< offset of layer l's biases
    int mean = 0;                    //!< offset of the inputs' means (z-score)
    int scale = 0;                   //!< offset of the inputs' standard deviations
    //! Offsets of each input's training range (-1: none). An input outside it is clamped into it
    //! first, so the MLP never extrapolates beyond the shapes and GPUs it was trained on.
    int input_min = -1;
    int input_max = -1;
    double output_min = -1.0e300; //!< the output is clamped below at this value
};

//! The MLP's (first) output for raw inputs `x` (width[0] values): clamp into the training range
//! (when the model has one), z-score, then each layer y = act(W·h + b). The sums run in index
//! order, so every backend gives the same bits.
KOKKOS_INLINE_FUNCTION double mlpEvaluate( const MlpLayout& m, const double* params,
                                           const double* x )
{
    double a[kMlpMaxWidth];
    double b[kMlpMaxWidth];
    a[0] = 0.0; // the output of a layout without inputs or layers (an unloaded model)
    const int n0 = m.width[0];
    for ( int i = 0; i < n0; ++i )
    {
        double xi = x[i];
        if ( m.input_min >= 0 )
            xi = math::fmin( math::fmax( xi, params[m.input_min + i] ), params[m.input_max + i] );
        a[i] = ( xi - params[m.mean + i] ) / params[m.scale + i];
    }
    for ( int l = 0; l < m.num_layers; ++l )
    {
        const int in = m.width[l];
        const int out = m.width[l + 1];
        const double* w = params + m.weights[l];
        const double* bias = params + m.bias[l];
        for ( int o = 0; o < out; ++o )
        {
            double s = bias[o];
            const double* row = w + o * in;
            for ( int i = 0; i < in; ++i )
                s += row[i] * a[i];
            b[o] = m.activation[l] == MlpActivation::relu ? ( s > 0.0 ? s : 0.0 ) : s;
        }
        for ( int o = 0; o < out; ++o )
            a[o] = b[o];
    }
    return math::fmax( a[0], m.output_min );
}

//! An MLP ready for kernels: layout by value, parameters in a View of `MemorySpace`. Loaded
//! models keep them in host memory (the host loops of planners and tests read them there); a
//! batch copies them to the device with its other inputs (kernel/scenario_batch.hpp).
template <class MemorySpace = Kokkos::HostSpace>
struct MlpModel
{
    MlpLayout layout;
    Kokkos::View<const double*, MemorySpace> params;

    bool loaded() const { return layout.num_layers > 0; }
};

} // namespace shardsweep
