// The sweep's ETA weighted by cost (issue 26: after a resume the cheap scenarios are done and
// the planned ones, far slower, come last): values computed by hand.
#include <gtest/gtest.h>
#include <sweep/cost_weighted_eta.hpp>

namespace Test
{
using shardsweep::detail::ClassWork;
using shardsweep::detail::CostWeightedEta;

namespace
{
ClassWork work( std::int64_t count0, double seconds0, std::int64_t count1, double seconds1,
                double evaluate )
{
    ClassWork w;
    w.count[0] = count0;
    w.seconds[0] = seconds0;
    w.count[1] = count1;
    w.seconds[1] = seconds1;
    w.evaluate_seconds = evaluate;
    return w;
}
} // namespace

TEST( TEST_CATEGORY, cost_weighted_eta_by_hand )
{
    // 8 pending scenarios: 4 of class 0 (cheap), then 4 of class 1; a sample of 4 stands for
    // positions [0, 2), [2, 4), [4, 6), [6, 8).
    const CostWeightedEta eta( { 0, 0, 1, 1 }, 8 );

    // Nothing done: no estimate.
    EXPECT_FALSE( eta.estimate( work( 0, 0.0, 0, 0.0, 0.0 ), 5.0 ).known );

    // The 4 cheap ones done in 10 s (1 s of planning each, 0.1 s of evaluation each). Class 1
    // has not been timed: only its evaluation counts, 4 · 0.1 s of 4.4 s done, and the time
    // left is at least 10 · 0.4 / 4.4 s.
    auto e = eta.estimate( work( 4, 4.0, 0, 0.0, 0.4 ), 10.0 );
    EXPECT_TRUE( e.known );
    EXPECT_TRUE( e.lower_bound );
    EXPECT_DOUBLE_EQ( e.seconds, 10.0 * 0.4 / 4.4 );

    // Two of class 1 done as well (3 s each) after 20 s: 2 · (3 + 0.1) s ahead of 10.6 s done.
    // The count-based ETA would say 20 · 2 / 6 = 6.7 s.
    e = eta.estimate( work( 4, 4.0, 2, 6.0, 0.6 ), 20.0 );
    EXPECT_TRUE( e.known );
    EXPECT_FALSE( e.lower_bound );
    EXPECT_DOUBLE_EQ( e.seconds, 20.0 * 6.2 / 10.6 );

    // All done: nothing left.
    e = eta.estimate( work( 4, 4.0, 4, 12.0, 0.8 ), 30.0 );
    EXPECT_FALSE( e.lower_bound );
    EXPECT_EQ( e.seconds, 0.0 );
}

TEST( TEST_CATEGORY, cost_weighted_eta_one_class_is_count_based )
{
    // One class: elapsed · remaining / done, whatever the costs. 5 pending, a sample of 2
    // (positions [0, 2) and [2, 5)); 3 done in 7 s leave 2.
    const CostWeightedEta eta( { 0, 0 }, 5 );
    const auto e = eta.estimate( work( 3, 2.0, 0, 0.0, 0.5 ), 7.0 );
    EXPECT_TRUE( e.known );
    EXPECT_FALSE( e.lower_bound );
    EXPECT_DOUBLE_EQ( e.seconds, 7.0 * 2.0 / 3.0 );
}

// Tiles and batches add their work class by class (the batch computer and the counters rely on
// it): (2, 0.5 s; 1, 3 s; eval 0.25 s) + (1, 0.25 s; 4, 1 s; eval 0.5 s) = (3, 0.75; 5, 4; 0.75).
TEST( TEST_CATEGORY, cost_weighted_eta_class_work_adds )
{
    ClassWork sum = work( 2, 0.5, 1, 3.0, 0.25 );
    sum += work( 1, 0.25, 4, 1.0, 0.5 );
    EXPECT_EQ( sum.count[0], 3 );
    EXPECT_EQ( sum.seconds[0], 0.75 );
    EXPECT_EQ( sum.count[1], 5 );
    EXPECT_EQ( sum.seconds[1], 4.0 );
    EXPECT_EQ( sum.evaluate_seconds, 0.75 );
    EXPECT_EQ( sum.total(), 8 );
}
} // namespace Test
