#pragma once
//! \file chunk_pipeline.hpp
//! \brief How the chunks of one collective move through the network dimensions' queues, as
//! ASTRA-sim's system layer schedules them (astra-sim 518bd51, astra-sim/system/Sys.cc:
//! generate_collective, insert_stream, proceed_to_next_vnet_baseline and SchedulerUnit;
//! docs/model/collectives.md, "Chunks").
//!
//! A collective of `preferred-dataset-splits` = c chunks creates c identical streams, each with
//! the same list of phases. Every phase waits in the queue of its dimension (the analytical
//! frontends run one queue per dimension, `--num-queues-per-dim` 1), and a queue runs at most
//! `active-chunks-per-dimension` = a streams at once; the congestion-unaware backend lets them
//! run side by side at full speed. All streams of one collective have the same priority, so a
//! queue serves them in the order they reached it (`scheduling-policy` orders collectives, not
//! the chunks of one). A stream that ends a phase joins the tail of its next phase's queue, then
//! its old queue starts the next waiting stream, then the new queue starts what it can.
//!
//! A localBWAware all-reduce on several dimensions runs the reduce-scatter of dimension d and,
//! later, its all-gather in the same queue: early chunks coming back down compete with later
//! chunks going up. Those queues are simulated stream by stream (`sharedQueuesNs`); every other
//! collective has one phase per queue, a flow shop with a closed form (`flowShopNs`).

#include <shardsweep/domain/hardware.hpp>
#include <shardsweep/model/math.hpp>

namespace shardsweep
{

//! Most chunks of a collective whose phases share queues (a localBWAware all-reduce on two or
//! more dimensions) that the model simulates; the platform parser refuses a larger
//! `preferred-dataset-splits` on such a network.
constexpr int kMaxSimulatedChunks = 64;

namespace collective_detail
{

//! Chunks through phases that each have a queue of their own: chunk j starts phase k when it has
//! left phase k-1 and chunk j-active has left phase k. The chunks are identical, so the `active`
//! chunks of one round move in step and the makespan of ⌈splits / active⌉ rounds is exactly
//! Σ phases + (rounds - 1) · max phase (the bottleneck phase serves every round; the others are
//! filled and drained once). One dimension: ⌈splits / active⌉ · T_1chunk. Every term is a whole
//! number of ns, so the sum is exact in double.
KOKKOS_INLINE_FUNCTION double flowShopNs( const double* phase, int num_phases, int splits,
                                          int active )
{
    const double rounds = ( splits + active - 1 ) / active;
    double sum = 0.0;
    double bottleneck = 0.0;
    for ( int k = 0; k < num_phases; ++k )
    {
        sum += phase[k];
        bottleneck = math::fmax( bottleneck, phase[k] );
    }
    return sum + ( rounds - 1.0 ) * bottleneck;
}

//! Chunks through phases whose queues repeat (queue[k]: the dimension phase k waits in), event
//! by event: a queue serves its waiting chunks in arrival order, `active` at a time. Phases that
//! end in the same ns are handled in the order they started (ASTRA-sim runs the events of one
//! tick in the order they were scheduled, and a phase started earlier scheduled its end first
//! when the phases are alike). Each queue's waiting chunks form a linked FIFO, so an event costs
//! a scan of the running chunks (at most active · queues): O(splits · phases · active · queues)
//! operations for splits ≤ kMaxSimulatedChunks.
KOKKOS_INLINE_FUNCTION double sharedQueuesNs( const double* phase, const int* queue, int num_phases,
                                              int splits, int active )
{
    int stage[kMaxSimulatedChunks];   // the phase a chunk is in or waits for
    int behind[kMaxSimulatedChunks];  // waiting: the chunk that arrived next in its queue, or -1
    int started[kMaxSimulatedChunks]; // running: the order in which its phase started
    double end[kMaxSimulatedChunks];  // running: when its phase ends
    int running[kMaxSimulatedChunks]; // the running chunks, unordered
    int num_running = 0;
    int first[kMaxNetworkDims], last[kMaxNetworkDims], busy[kMaxNetworkDims];
    for ( int q = 0; q < kMaxNetworkDims; ++q )
    {
        first[q] = last[q] = -1;
        busy[q] = 0;
    }
    int starts = 0;
    double now = 0.0;
    auto arrive = [&]( int q, int j )
    {
        behind[j] = -1;
        if ( last[q] < 0 )
            first[q] = j;
        else
            behind[last[q]] = j;
        last[q] = j;
    };
    auto serve = [&]( int q )
    {
        while ( busy[q] < active && first[q] >= 0 )
        {
            const int j = first[q];
            first[q] = behind[j];
            if ( first[q] < 0 )
                last[q] = -1;
            end[j] = now + phase[stage[j]];
            started[j] = starts++;
            running[num_running++] = j;
            ++busy[q];
        }
    };
    for ( int j = 0; j < splits; ++j )
    {
        stage[j] = 0;
        arrive( queue[0], j );
    }
    serve( queue[0] );
    while ( num_running > 0 )
    {
        int r = 0;
        for ( int i = 1; i < num_running; ++i )
        {
            const int a = running[i], b = running[r];
            if ( end[a] < end[b] || ( end[a] == end[b] && started[a] < started[b] ) )
                r = i;
        }
        const int j = running[r];
        running[r] = running[--num_running];
        now = end[j];
        const int from = queue[stage[j]];
        --busy[from];
        const bool more = ++stage[j] < num_phases;
        if ( more )
            arrive( queue[stage[j]], j ); // the tail of the next queue, before `from` moves on
        serve( from );
        if ( more )
            serve( queue[stage[j]] );
    }
    return now;
}

//! Time (ns) of one collective whose chunk runs through `phase[0..num_phases)`, phase k in the
//! queue of dimension queue[k] (each < kMaxNetworkDims). More than kMaxSimulatedChunks chunks on
//! shared queues (refused by the platform parser; only a SystemConfig built by hand gets here)
//! are priced as the flow shop, which the simulation never undercuts (sharing a queue only adds
//! waiting; tstChunkPipeline checks it on every case it simulates).
KOKKOS_INLINE_FUNCTION double pipelineNs( const SystemConfig& sys, const double* phase,
                                          const int* queue, int num_phases )
{
    const int splits = math::max( 1, sys.preferred_dataset_splits );
    const int active = math::max( 1, sys.active_chunks_per_dimension );
    bool shared = false;
    for ( int k = 0; k < num_phases; ++k )
        for ( int i = 0; i < k; ++i )
            shared = shared || queue[i] == queue[k];
    // With every chunk in a slot from the start nothing waits, and shared queues change nothing.
    if ( !shared || splits <= active || splits > kMaxSimulatedChunks )
        return flowShopNs( phase, num_phases, splits, active );
    return sharedQueuesNs( phase, queue, num_phases, splits, active );
}

} // namespace collective_detail
} // namespace shardsweep
