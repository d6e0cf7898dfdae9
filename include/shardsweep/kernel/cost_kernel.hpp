#pragma once
//! \file cost_kernel.hpp
//! \brief The batched cost kernel: predicts one training iteration for many scenarios at once.
//!
//! A scenario is (workload, platform, plan, global batch, cost model); DLRM and transformer
//! scenarios share one batch and one launch path. The host flattens a batch
//! of scenarios into struct-of-arrays Views (scenarios, GPUs, shards) and the Kokkos kernels of
//! batch_launch.hpp evaluate them in the execution space the caller passes. Results are
//! bit-identical between Serial and OpenMP: every reduction runs in a fixed order inside one
//! scenario, whether one thread or a team prices it.
#include <cstdint>
#include <shardsweep/domain/scenario.hpp>
#include <shardsweep/kernel/backend.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

class CaseCache;

//! How many scenarios one evaluateScenarios call should hold on `backend`. Several calls may run
//! at once, one per host thread, given a CaseCache or none: the sweep engine evaluates a
//! batch's tiles so. Host backends (Serial, OpenMP): 256, so that a call's workloads, packed
//! Views and results stay in the core's cache while they are built, evaluated and read back
//! (calls of 2048 50-table scenarios, ~20 MB of table specs each, spent a quarter of their time in
//! cache misses and page faults: docs/PERFORMANCE.md); each call's kernels run in its thread. A
//! device: 1024, so that the host threads pack and unpack concurrently (one thread packing a
//! whole batch bound the sweep) while the device takes one call at a time.
std::size_t preferredScenariosPerCall( Backend backend );

//! Why the kernel cannot evaluate `input` (missing inputs, a cost model the workload kind lacks,
//! a parallel configuration that does not fit the model or the GPUs, a DLRM plan outside the
//! workload or platform), or empty when it can. The one check of a scenario as given: the sweep
//! marks such scenarios no_plan with it, evaluate and export-et report it, and evaluateScenarios
//! throws std::invalid_argument with it ("scenario i: ...").
std::string scenarioInputError( const ScenarioInput& input );

//! Evaluates a batch of scenarios in `backend`'s execution space: one launch of the batched
//! kernel, its inputs copied to the device and its outputs back once each. With a `cache`, the
//! table statistics of earlier calls kept there are reused and the new ones added (bit-identical
//! results: see table_stats_cache.hpp).
std::vector<ScenarioResult> evaluateScenarios( Backend backend,
                                               const std::vector<ScenarioInput>& inputs,
                                               CaseCache* cache = nullptr );
//! The same in the default backend (defaultBackend()).
std::vector<ScenarioResult> evaluateScenarios( const std::vector<ScenarioInput>& inputs );

//! Convenience for planners and tests: one scenario on the host.
ScenarioResult evaluateScenario( const ScenarioInput& input );

} // namespace shardsweep
