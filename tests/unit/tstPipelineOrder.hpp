// The order of a pipeline rank's passes (scenario/pipeline_order.hpp), which the transformer step
// graph chains: Megatron-LM's 1F1B, GPipe and interleaved 1F1B, written out by hand.
#include <gtest/gtest.h>
#include <shardsweep/scenario/pipeline_order.hpp>
#include <string>
#include <vector>

namespace
{

using shardsweep::PipelinePass;
using shardsweep::PipelineSchedule;

//! "F01 B11 …": F/B, micro-batch, chunk.
std::string written( const std::vector<PipelinePass>& passes )
{
    std::string s;
    for ( const PipelinePass& p : passes )
        s += ( s.empty() ? "" : " " ) + std::string( p.forward ? "F" : "B" ) +
             std::to_string( p.micro_batch ) + std::to_string( p.chunk );
    return s;
}

std::string order( PipelineSchedule schedule, bool train, int p, int v, int m, int stage )
{
    return written( shardsweep::pipelinePasses( schedule, train, p, v, m, stage ) );
}

} // namespace

// Interleaved 1F1B (Megatron-LM schedules.py, forward_backward_pipelining_with_interleaving):
// rank r runs min(2(p − r − 1) + (v − 1)p, m·v) warm-up chunk forwards; the k-th forward is chunk
// ⌊k/p⌋ mod v of micro-batch ⌊k/(pv)⌋p + k mod p, the k-th backward the chunks reversed.
// p = 2, v = 2, m = 2: rank 0 warms up with all 4 forwards; rank 1 with 2, then F(k = 2) is
// micro-batch 0 on chunk 1 and B(k = 0) micro-batch 0 on chunk 1.
TEST( TEST_CATEGORY, interleaved_passes_follow_megatrons_order )
{
    const auto one_f_one_b = PipelineSchedule::one_f_one_b;
    EXPECT_EQ( order( one_f_one_b, true, 2, 2, 2, 0 ), "F00 F10 F01 F11 B01 B11 B00 B10" );
    EXPECT_EQ( order( one_f_one_b, true, 2, 2, 2, 1 ), "F00 F10 F01 B01 F11 B11 B00 B10" );
    // p = 4, v = 2, m = 4, the last rank: 4 warm-up forwards of chunk 0, then chunk 1 in 1F1B,
    // then the backwards of chunk 0.
    EXPECT_EQ( order( one_f_one_b, true, 4, 2, 4, 3 ),
               "F00 F10 F20 F30 F01 B01 F11 B11 F21 B21 F31 B31 B00 B10 B20 B30" );
    // p = 4, v = 2, m = 4, rank 1: 2·2 + 4 = 8 warm-ups, i.e. every forward first.
    EXPECT_EQ( order( one_f_one_b, true, 4, 2, 4, 1 ),
               "F00 F10 F20 F30 F01 F11 F21 F31 B01 B11 B21 B31 B00 B10 B20 B30" );
    // Inference runs the forwards only, in the same order.
    EXPECT_EQ( order( one_f_one_b, false, 2, 2, 2, 1 ), "F00 F10 F01 F11" );
}

// 1F1B (SC'21 §2.2.1): p − s − 1 warm-up forwards; GPipe: every forward, then every backward.
TEST( TEST_CATEGORY, one_f_one_b_and_gpipe_passes )
{
    EXPECT_EQ( order( PipelineSchedule::one_f_one_b, true, 3, 1, 4, 0 ),
               "F00 F10 F20 B00 F30 B10 B20 B30" );
    EXPECT_EQ( order( PipelineSchedule::one_f_one_b, true, 3, 1, 4, 2 ),
               "F00 B00 F10 B10 F20 B20 F30 B30" );
    // Fewer micro-batches than warm-up slots: all forwards first.
    EXPECT_EQ( order( PipelineSchedule::one_f_one_b, true, 4, 1, 2, 0 ), "F00 F10 B00 B10" );
    EXPECT_EQ( order( PipelineSchedule::gpipe, true, 3, 1, 2, 2 ), "F00 F10 B00 B10" );
}
