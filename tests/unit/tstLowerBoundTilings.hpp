// The lower bound's per-table floor and tilings (docs/PLANNERS.md, "Lower bound"): the floor is
// the least cost per area of any block, the tilings stand for every real tiling at any prices of
// lookups, ids and pooled values, and they count the remainder blocks and widths a real tiling
// must have.
#include <cmath>
#include <gtest/gtest.h>
#include <lower_bound_test_support.hpp>
#include <plan/lower_bound_detail.hpp>
#include <shardsweep/model/embedding.hpp>
#include <vector>

namespace Test
{
using namespace shardsweep;
using namespace shardsweep::bound_detail;

namespace
{
//! Prices of a tiling's lookups (ms), of its id factor and of its pooled factor.
struct TilingPrice
{
    double lookup, ids, pooled;
};

//! For each price, the least priced cost of tiling `t` by blocks of one width and row share (HBM
//! kernel): lookup × the model's cost of the blocks that tile it + ids × min(cap, dim / w) +
//! pooled × min(cap, 1 / s), by brute force over every width and 20 001 row shares: an upper
//! estimate of the exact least.
std::vector<double> bruteForceTilingCost( const Platform& p, const TableSpec& t, double batch,
                                          const std::vector<TilingPrice>& prices )
{
    const EmbeddingTableStats st = embeddingTableStats( t, batch, 0.0 );
    const double cap = kTilingVolumeCap;
    std::vector<double> least( prices.size(), 1e300 );
    for ( int w = 1; w <= t.dim; ++w )
        for ( int k = 0; k <= 20000; ++k )
        {
            const double s = std::max( 1.0 / t.rows, std::pow( 10.0, -6.0 * k / 20000 ) );
            const EmbeddingCost c = embeddingShardCostFromStats( p.gpu, p.host_to_gpu_GBps, t, st,
                                                                 s, w, batch, ComputeKernel::hbm );
            const double tiling_ms = t.dim * ( c.fwd_ms + c.bwd_ms ) / ( w * s );
            for ( std::size_t i = 0; i < prices.size(); ++i )
                least[i] =
                    std::min( least[i], prices[i].lookup * tiling_ms +
                                            prices[i].ids * std::min( cap, 1.0 * t.dim / w ) +
                                            prices[i].pooled * std::min( cap, 1.0 / s ) );
        }
    return least;
}

//! The least model cost per unit of area of any block of `t` (HBM kernel), by brute force.
double bruteForceCostPerArea( const Platform& p, const TableSpec& t, double batch )
{
    return bruteForceTilingCost( p, t, batch, { { 1.0, 0.0, 0.0 } } )[0] / t.dim;
}
} // namespace

// A table whose distinct rows fit the L2 gains nothing from splitting (every repeat already
// hits), and each block pays its own output stream: the floor is the model's own cost of the
// whole table in HBM, exactly. A Zipf table of 20M rows does gain (a row block whose distinct
// rows fit hits every repeat): its floor is the least cost per area of any block times the
// table's width, which the model's shard cost found by brute force over 128 widths and 20 001
// row shares approaches from above, within the grid's step.
TEST( TEST_CATEGORY, embedding_floor_is_the_least_cost_per_area_of_any_block )
{
    const Platform p = fourA100s();
    const double batch = 65536;
    const TableSpec small = smallUniformTable( 64 );
    const EmbeddingTableStats st = embeddingTableStats( small, batch, 0.0 );
    const EmbeddingCost whole = embeddingShardCostFromStats( p.gpu, p.host_to_gpu_GBps, small, st,
                                                             1.0, 64, batch, ComputeKernel::hbm );
    EXPECT_NEAR( modelParallelFloorMs( p, small, st, batch, 0.0 ) / ( whole.fwd_ms + whole.bwd_ms ),
                 1.0, 1e-12 );

    const TableSpec big = bigZipfTable();
    const EmbeddingTableStats bst = embeddingTableStats( big, batch, 0.0 );
    const double floor_ms = modelParallelFloorMs( p, big, bst, batch, 0.0 );
    const double brute_ms = big.dim * bruteForceCostPerArea( p, big, batch );
    const EmbeddingCost unsplit = embeddingShardCostFromStats(
        p.gpu, p.host_to_gpu_GBps, big, bst, 1.0, 128, batch, ComputeKernel::hbm );
    EXPECT_LT( floor_ms, 0.95 * ( unsplit.fwd_ms + unsplit.bwd_ms ) ); // splitting does help
    EXPECT_LE( floor_ms, brute_ms * ( 1.0 + 1e-12 ) );
    EXPECT_GT( floor_ms, brute_ms * ( 1.0 - 2e-3 ) );
}

namespace
{
//! For each price, the least priced cost of tilings of `t` that exist (HBM kernel): m column
//! blocks of one width, or two of widths w and dim − w, each cut into n row blocks of share s and
//! one of the rest (2 001 shares s, n = ⌊1 / s⌋), with the volumes the bound counts: each column
//! block receives the ids of all its rows (one shard's ids each), each row block sends its
//! columns' pooled values (one shard's times its width's share). An upper estimate of the least
//! over every tiling.
std::vector<double> bruteForceRealTilingCost( const Platform& p, const TableSpec& t, double batch,
                                              const std::vector<TilingPrice>& prices )
{
    const EmbeddingTableStats st = embeddingTableStats( t, batch, 0.0 );
    const auto ms = [&]( double s, int w )
    {
        const EmbeddingCost c = embeddingShardCostFromStats( p.gpu, p.host_to_gpu_GBps, t, st, s, w,
                                                             batch, ComputeKernel::hbm );
        return c.fwd_ms + c.bwd_ms;
    };
    // column[w][i]: the least priced lookups and pooled values of one column block w wide.
    std::vector<std::vector<double>> column( t.dim + 1,
                                             std::vector<double>( prices.size(), 1e300 ) );
    for ( int w = 1; w <= t.dim; ++w )
        for ( int k = 0; k <= 2000; ++k )
        {
            const double s = std::max( 1.0 / t.rows, std::pow( 10.0, -4.0 * k / 2000 ) );
            const double n = std::floor( 1.0 / s + 1e-12 ), rest = 1.0 - n * s;
            const bool has_rest = rest * t.rows >= 1.0;
            const double lookups = n * ms( s, w ) + ( has_rest ? ms( rest, w ) : 0.0 );
            const double pooled = ( n + ( has_rest ? 1.0 : 0.0 ) ) * w / t.dim;
            for ( std::size_t i = 0; i < prices.size(); ++i )
                column[w][i] = std::min( column[w][i],
                                         prices[i].lookup * lookups + prices[i].pooled * pooled );
        }
    std::vector<double> least( prices.size(), 1e300 );
    for ( std::size_t i = 0; i < prices.size(); ++i )
    {
        for ( int m = 1; m <= t.dim; ++m )
            if ( t.dim % m == 0 )
                least[i] = std::min( least[i], m * ( column[t.dim / m][i] + prices[i].ids ) );
        for ( int w = 1; w < t.dim; ++w )
            least[i] =
                std::min( least[i], column[w][i] + column[t.dim - w][i] + 2.0 * prices[i].ids );
    }
    return least;
}
} // namespace

// The tilings the bound weighs stand for every tiling at any prices of lookups, ids and pooled
// values: for each price the cheapest of them lies below the cheapest tiling of the brute force.
// Mixes of single block shapes reach the least cost per area over the whole table, which real
// tilings cannot where the best share does not divide the rows: counted by columns (each cut into
// shares that sum to 1) the tilings' least lookups lie above the floor, and the bound's cheapest
// tiling with them. Without prices on the volumes that is the least lookups; with them, narrow or
// short blocks cost what they send, and the cheapest tiling is dearer than the floor.
TEST( TEST_CATEGORY, tilings_price_every_block_with_its_volumes )
{
    const Platform p = fourA100s();
    const double batch = 65536;
    const TableSpec big = bigZipfTable();
    const EmbeddingTableStats bst = embeddingTableStats( big, batch, 0.0 );
    const double floor_ms = modelParallelFloorMs( p, big, bst, batch, 0.0 );
    const std::vector<Tiling> tilings = modelParallelTilings( p, big, bst, batch );
    ASSERT_GE( tilings.size(), 2u );
    ASSERT_LE( tilings.size(), kMaxTilings );
    const double f = floor_ms;
    const std::vector<TilingPrice> prices = {
        { 1.0, 0.0, 0.0 },          { 1.0, 0.1 * f, 0.0 },     { 1.0, 0.0, 0.1 * f },
        { 1.0, 0.05 * f, 0.2 * f }, { 1.0, 0.5 * f, 0.5 * f }, { 0.3, 0.02 * f, 0.01 * f } };
    const std::vector<double> fractional = bruteForceTilingCost( p, big, batch, prices );
    const std::vector<double> real = bruteForceRealTilingCost( p, big, batch, prices );
    for ( std::size_t i = 0; i < prices.size(); ++i )
    {
        double cheapest = 1e300;
        for ( const Tiling& x : tilings )
        {
            cheapest = std::min( cheapest, prices[i].lookup * x.ms + prices[i].ids * x.id_factor +
                                               prices[i].pooled * x.pooled_factor );
        }
        EXPECT_LE( cheapest, real[i] * ( 1.0 + 1e-12 ) ) << "price " << i;
        EXPECT_GT( cheapest, fractional[i] * ( 1.0 - 2e-3 ) ) << "price " << i;
        EXPECT_GT( cheapest, real[i] * 0.94 ) << "price " << i;
    }
    // The least lookups of the tilings lie 3.7 % above the floor, and 1.5 % below the best real
    // tiling the brute force finds; at the other prices the bound lies within 6 % of it.
    EXPECT_NEAR( tilings.front().ms / floor_ms, 1.037, 1e-3 );
    EXPECT_GT( tilings.front().ms, 0.98 * real[0] );
    // The floor's own tiling sends more than one whole shard: pricing its volumes costs.
    EXPECT_GT( fractional[4], f + 0.5 * f + 0.5 * f + 1e-3 * f );
}

// A table 20 columns wide (80 B rows, three 32-byte sectors) whose rows fit the L2: splitting
// its rows gains nothing, and 16-column blocks (two sectors) cost least per area, but no tiling
// is made of them alone. Counted by rows, every tiling writes 20 as a sum of widths and costs at
// least the least sum of whole-height blocks of those widths, which the test finds by its own
// dynamic program over the model's cost of every width.
TEST( TEST_CATEGORY, tilings_cover_the_width_with_real_blocks )
{
    const Platform p = fourA100s();
    const double batch = 65536;
    const TableSpec t = smallUniformTable( 20 );
    const EmbeddingTableStats st = embeddingTableStats( t, batch, 0.0 );
    std::vector<double> least( t.dim + 1, 1e300 );
    least[0] = 0.0;
    for ( int d = 1; d <= t.dim; ++d )
        for ( int w = 1; w <= d; ++w )
        {
            const EmbeddingCost c = embeddingShardCostFromStats(
                p.gpu, p.host_to_gpu_GBps, t, st, 1.0, w, batch, ComputeKernel::hbm );
            least[d] = std::min( least[d], least[d - w] + c.fwd_ms + c.bwd_ms );
        }
    const double floor_ms = modelParallelFloorMs( p, t, st, batch, 0.0 );
    const std::vector<Tiling> tilings = modelParallelTilings( p, t, st, batch );
    EXPECT_NEAR( tilings.front().ms / least[t.dim], 1.0, 1e-12 );
    EXPECT_GT( tilings.front().ms, 1.05 * floor_ms );
}

// A 4M x 32 Zipf table with many lookups per sample costs least per area in row blocks whose
// distinct rows just overflow the L2 (the L2 still serves as many repeats while the DRAM side
// catches up), at a share near 0.6 that does not divide the rows: counted by columns, each cut
// into shares that sum to 1, the rest of the rows pays for a block of its own. The tilings'
// least lookups (0.688 ms) lie 2.7 % above the floor and below the best real tiling of the brute
// force (0.700 ms).
TEST( TEST_CATEGORY, tilings_cover_the_rows_with_real_blocks )
{
    const Platform p = fourA100s();
    const double batch = 65536;
    const TableSpec t = manyLookupsZipfTable();
    const EmbeddingTableStats st = embeddingTableStats( t, batch, 0.0 );
    const double floor_ms = modelParallelFloorMs( p, t, st, batch, 0.0 );
    const std::vector<Tiling> tilings = modelParallelTilings( p, t, st, batch );
    const double real = bruteForceRealTilingCost( p, t, batch, { { 1.0, 0.0, 0.0 } } )[0];
    EXPECT_GT( tilings.front().ms, 1.02 * floor_ms );
    EXPECT_LE( tilings.front().ms, real );
}

// The tilings count a column's row shares by a knapsack that takes a block's cost per column as
// nondecreasing in its share (lower_bound_floor.cpp, columnCoverMs): lookups, distinct rows and
// the rows the L2 cannot hold all grow with the share. Checked on the model's shard cost for
// tables whose blocks gain from the L2 and tables that do not, every width class, 4 001 shares.
TEST( TEST_CATEGORY, block_cost_never_falls_as_its_row_share_grows )
{
    const Platform p = fourA100s();
    const double batch = 65536;
    TableSpec big_uniform = smallUniformTable( 64 );
    big_uniform.rows = 10'000'000;
    for ( const TableSpec& t :
          { bigZipfTable(), manyLookupsZipfTable(), smallUniformTable( 20 ), big_uniform } )
    {
        const EmbeddingTableStats st = embeddingTableStats( t, batch, 0.0 );
        for ( int w : { 1, 4, 8, 16, t.dim } )
        {
            double previous = 0.0;
            for ( int k = 0; k <= 4000; ++k )
            {
                const double s = std::max( 1.0 / t.rows, std::pow( 10.0, -6.0 + 6.0 * k / 4000 ) );
                const EmbeddingCost c = embeddingShardCostFromStats(
                    p.gpu, p.host_to_gpu_GBps, t, st, s, w, batch, ComputeKernel::hbm );
                const double ms = c.fwd_ms + c.bwd_ms;
                ASSERT_GE( ms, previous * ( 1.0 - 1e-12 ) )
                    << t.rows << " x " << t.dim << ", width " << w << ", share " << s;
                previous = ms;
            }
        }
    }
}

} // namespace Test
