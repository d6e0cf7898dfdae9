#pragma once
//! \file lower_bound_detail.hpp
//! \brief The pieces of the lower bound on a DLRM plan's iteration time (lower_bound.cpp,
//! docs/PLANNERS.md "Lower bound") that its relaxations (lower_bound_relaxation.cpp) and the
//! tests share. Not part of the public API.
#include <limits>
#include <shardsweep/domain/dlrm_spec.hpp>
#include <shardsweep/domain/hardware.hpp>
#include <shardsweep/model/dense.hpp>
#include <shardsweep/model/embedding.hpp>
#include <unordered_map>
#include <vector>

namespace shardsweep::bound_detail
{

//! Least fwd + bwd time (ms, summed over shards) of table t model-parallel at `batch`, over
//! every tiling into shards, when `host_share` of the distinct rows' first reads and of the row
//! updates come over the host link (0: HBM; 1: UVM; uvm_caching: the share of distinct rows its
//! cache misses). `stats`: embeddingTableStats( t, batch, 0 ).
double modelParallelFloorMs( const Platform& platform, const TableSpec& t,
                             const EmbeddingTableStats& stats, double batch, double host_share );

//! The row share at which a block `cols` wide costs least per unit of area in HBM (the smallest
//! if several tie): a table cut into row blocks of that share and one of the rest looks up the
//! least of any cut into blocks that wide, the remainder aside. `stats`: as for the floor.
double leastCostRowShare( const Platform& platform, const TableSpec& t,
                          const EmbeddingTableStats& stats, double batch, int cols );

//! A tiling of a model-parallel table by blocks w columns wide holding row share s, relaxed: the
//! lookups of all its blocks (ms) and its all-to-all volumes as multiples of one whole shard's.
//! Every column block receives the ids of its rows, so the ids grow by dim / w; every row block
//! sends partial sums of its columns for every sample, so the pooled values grow by 1 / s. Any
//! tiling's lookups and volumes are at least a mix of those of its blocks' tilings.
struct Tiling
{
    double ms = 0.0;
    double id_factor = 1.0, pooled_factor = 1.0;
    //! HBM bytes of all its blocks (modelParallelTilingBytes): every row block keeps a pooled
    //! output and all-to-all buffers for every sample, so they grow with the pooled values.
    double bytes = 0.0;
};

//! Factors above this are cut to it: the collectives are nondecreasing, so smaller volumes still
//! bound, and the straight lines under them need not reach far.
constexpr double kTilingVolumeCap = 16.0;
//! Beyond this many tilings, neighbours by time are merged into their least in each coordinate.
constexpr std::size_t kMaxTilings = 16;

//! The tilings the bound weighs for table t in HBM, by increasing time: those of the block
//! shapes where the floor's cost can be least that no mix of two others beats in all three of
//! lookups, ids and pooled values (and so in bytes), none below the least lookups of a tiling
//! that covers the table with real blocks (docs/PLANNERS.md, "Real tilings"). The first has the
//! least lookups: the floor (modelParallelFloorMs, host_share 0) or above it.
std::vector<Tiling> modelParallelTilings( const Platform& platform, const TableSpec& t,
                                          const EmbeddingTableStats& stats, double batch );

//! HBM bytes (all GPUs together) of table t in HBM tiled as `y`, at least: its rows, and for one
//! whole shard each column's pooled output for the global batch and its gradient and the
//! all-to-all buffers (pooled values sent and received, and their gradients), times
//! y.pooled_factor, and the ids received, times y.id_factor.
double modelParallelTilingBytes( const TableSpec& t, double batch, double gpus, const Tiling& y );

//! The same for a data-parallel table: each GPU's pooled output and its gradient.
double dataParallelOutputBytes( const TableSpec& t, double batch );

//! Lookup time (ms, summed over the `gpus` replicas) of table t data-parallel: every GPU looks
//! it up for its `batch / gpus` samples with `kernel`. `stats`: embeddingTableStats at that
//! local batch (with the HBM cache's share of the rows for uvm_caching).
double dataParallelMs( const Platform& platform, const TableSpec& t,
                       const EmbeddingTableStats& stats, double batch, double gpus,
                       ComputeKernel kernel );

//! One way of holding a table, relaxed: no plan that holds it this way needs fewer HBM bytes
//! (all GPUs together) or less lookup time (ms, summed over its shards or replicas).
struct Holding
{
    double bytes = 0.0;
    double ms = 0.0;
};

//! The ways of holding one table, model-parallel and data-parallel: rows in HBM, in host memory
//! (UVM), or there with an HBM cache of any size (uvm_caching). Each list is the lower convex
//! hull of its points, by decreasing bytes and increasing time: the per-table part of the
//! bound's Lagrangian relaxation of the memory constraint.
struct TableHoldings
{
    std::vector<Holding> model_parallel, data_parallel;
    //! The model-parallel holdings with the rows in host memory alone (model_parallel has the
    //! tilings in HBM too): where one of these is cheapest, the tilings do not apply.
    std::vector<Holding> model_parallel_host;
};

//! What a table's holdings need of its access pattern, which its width, element type and
//! optimizer do not change (so the bound's cache shares it between tables that differ only in
//! those): its statistics at the global and at the local batch, for every HBM cache share in
//! `shares` the distinct rows the cache misses at the global batch, and for the shares that
//! data-parallel caches take its statistics at the local batch.
struct AccessCurve
{
    std::vector<double> shares;
    std::vector<char> data_parallel; //!< per share: taken by data-parallel caches too
    EmbeddingTableStats global, local;
    std::vector<double> global_missed_rows;
    std::vector<LruStats> local_cached;
};

//! `batch`: the global batch; `gpus`: the platform's GPU count.
AccessCurve accessCurve( const TableSpec& t, double batch, double gpus );

//! The holdings of table t, whose accessCurve( t, batch, gpus ) is `curve`.
TableHoldings tableHoldings( const Platform& platform, const TableSpec& t, double batch,
                             double gpus, const AccessCurve& curve );

//! Lower convex hull of `points` (any order), by decreasing bytes: the points no mix of two
//! others beats in both bytes and time.
std::vector<Holding> lowerHull( std::vector<Holding> points );

//! What the bound knows of one table at a given price of memory: its cheapest model-parallel
//! and data-parallel holding (ms + price × bytes, summed over shards) and their bytes, and the
//! all-to-all volumes it adds when model-parallel.
struct RelaxedTable
{
    double mp_ms = 0.0, dp_ms = 0.0;
    double mp_bytes = 0.0, dp_bytes = 0.0;
    double pooled_bytes = 0.0, id_bytes = 0.0;
    double gradient_bytes = 0.0; //!< what it adds to the all-reduce when data-parallel
    //! Its model-parallel tilings when mp_ms is their floor and there is a choice (null: volumes
    //! fixed at one whole shard's, as for holdings priced by memory). Not owned: the bound's
    //! cache holds them.
    const std::vector<Tiling>* tilings = nullptr;
    //! With tilings under a price of memory: how much more its cheapest holding in host memory
    //! costs than mp_ms (priced), the choice a tiling must not be dearer than.
    double host_extra_ms = std::numeric_limits<double>::infinity();
};

//! The relaxation's value and the HBM bytes of the holdings it chose.
struct RelaxedBound
{
    double ms = 0.0;
    double bytes = 0.0;
};

//! Scratch arrays of relaxedBoundMs, kept across calls so that a sweep's bounds allocate
//! nothing.
struct RelaxedScratch
{
    std::vector<double> extra, extra_bytes, by_pooled, by_ids, own_pooled, own_ids, own_gradient;
    std::vector<const RelaxedTable*> own_table; //!< in the order of extra
    std::vector<int> order;
    //! All-to-all times by volume while memoryBoundMs runs (its evaluations at different prices
    //! mostly ask for the same volumes; on multi-dimension networks they dominate its time).
    std::unordered_map<double, double> all_to_all_ms;
    bool remember_all_to_alls = false;
    //! memoryBoundMs's breakpoints and tables at one price.
    std::vector<double> prices;
    double price = 0.0; //!< of an HBM byte, while memoryBoundMs runs (ms per byte)
    std::vector<RelaxedTable> priced;
};

//! The bound for one price of memory: the step timeline of the GPUs' mean lookup work, the
//! dense part and balanced all-to-alls, minimised over which tables go data-parallel, with
//! `lookup_offset_ms` (−price × capacity / GPUs) added to the lookups. Price 0 and offset 0
//! give the bound without memory.
RelaxedBound relaxedBoundMs( const Platform& platform, const DenseCost& dense,
                             double dense_gradient_bytes, const std::vector<RelaxedTable>& tables,
                             double lookup_offset_ms, RelaxedScratch& scratch );

//! The bound with the memory constraint: the largest Lagrangian bound over the price of memory,
//! L(price) = relaxedBoundMs with every table's cheapest holdings at that price, less
//! price × `capacity_bytes` (HBM of all GPUs left for tables), over the prices where a table's
//! cheapest holding changes (L is concave in the price: a bisection on its supergradient finds
//! the largest).
double memoryBoundMs( const Platform& platform, const DenseCost& dense, double dense_gradient_bytes,
                      const std::vector<const TableHoldings*>& holdings,
                      const std::vector<RelaxedTable>& volumes, double capacity_bytes,
                      RelaxedScratch& scratch );

} // namespace shardsweep::bound_detail
