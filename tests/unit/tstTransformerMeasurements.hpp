// The measured steps the transformer model is validated on (calibration/transformer_fit.hpp):
// what each set's timing includes, so that the prediction prices the same thing.
#include <cmath>
#include <gpu_calibration_test_support.hpp>
#include <shardsweep/calibration/transformer_fit.hpp>
#include <shardsweep/io/gpu_catalog.hpp>
#include <shardsweep/io/text_file.hpp>
#include <shardsweep/model/transformer/operators.hpp>
#include <shardsweep/model/transformer/step.hpp>

namespace Test
{
using namespace shardsweep;

// NeuSight times a training step as the model's forward plus loss.backward(), with the loss
// computed untimed between them, and runs BERT inference as sequence classification, without
// the LM head of its BERT training (sitar-lab/NeuSight, neusight/Tracing/trace.py). The rows say
// so, and the prediction is the one-GPU step less those parts: by hand from the operator costs.
TEST( TEST_CATEGORY, neusight_rows_leave_out_what_neusight_does_not_time )
{
    const std::string path = tempPath( "neusight_rows.csv" );
    writeTextFileAtomically( path, "gpu,model,mode,seq_len,batch,variant,e2e_ms\n"
                                   "Tesla V100-PCIE-32GB,bert_large,inf,512,8,none,257.4\n"
                                   "Tesla V100-PCIE-32GB,bert_large,train,512,2,none,234.3\n"
                                   "Tesla V100-PCIE-32GB,gpt2_large,inf,1024,4,none,728.8\n"
                                   "Tesla V100-PCIE-32GB,switchxl4,inf,512,8,none,100.0\n" );
    const std::vector<TransformerMeasurement> rows =
        readNeusightMeasurements( path, defaultGpuCatalogDir() );
    std::remove( path.c_str() );
    ASSERT_EQ( rows.size(), 3u ); // the mixture of experts has no dense spec: skipped
    EXPECT_TRUE( rows[0].without_lm_head );
    EXPECT_FALSE( rows[0].without_loss_forward );
    EXPECT_FALSE( rows[1].without_lm_head );
    EXPECT_TRUE( rows[1].without_loss_forward );
    EXPECT_FALSE( rows[2].without_lm_head ); // GPT runs its LM head in inference too
    EXPECT_FALSE( rows[2].without_loss_forward );

    const TransformerConstants c = shippedTransformerConstants();
    for ( const TransformerMeasurement& m : rows )
    {
        const TransformerOperatorCost ops = transformerOperatorCostWith(
            c, transformerOperatorCase( m.platform.gpu, m.model, m.config ),
            shippedGemmConstants() );
        const TransformerStepSummary s =
            predictTransformerStepWith( c, m.platform, m.model, m.config, ops );
        const bool train = m.config.mode == RunMode::train;
        // One GPU, one micro-batch: forward and backward once, then the optimizer.
        double want = 0.0;
        if ( train )
            want = s.phase_ms[int( TransformerPhase::compute )] - ops.loss_fwd_ms;
        else
            want = m.model.layers * ( ops.layer_fwd_ms - ops.layer_dropout_ms ) +
                   ops.embedding_fwd_ms + ( m.without_lm_head ? 0.0 : ops.head_fwd_ms );
        EXPECT_NEAR( predictMeasurement( c, m, shippedGemmConstants() ), want, 1e-9 * want )
            << m.label;
        if ( m.without_lm_head )
        {
            EXPECT_GT( ops.head_fwd_ms, 0.05 * want ); // the vocabulary GEMM is not negligible
        }
    }
}

} // namespace Test
