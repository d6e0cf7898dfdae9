#pragma once
// The sweep's ETA weighted by what its remaining scenarios cost (not installed).
#include <cstdint>
#include <shardsweep/domain/scenario.hpp>
#include <shardsweep/plan/planner.hpp>
#include <vector>

namespace shardsweep
{
namespace detail
{

//! Scenarios cost what their planner costs: planning times differ by orders of magnitude between
//! planners (round-robin against the shardsweep search), and sweeps list the planners one after
//! the other, the searching ones last. One class per PlannerKind, `none` included.
constexpr int kNumCostClasses = kNumPlanners + 1;
inline int costClass( PlannerKind planner )
{
    return static_cast<int>( planner );
}

//! Work done so far in this run, per cost class.
struct ClassWork
{
    std::vector<std::int64_t> count = std::vector<std::int64_t>( kNumCostClasses, 0 );
    //! Materialise and plan thread-seconds of those scenarios.
    std::vector<double> seconds = std::vector<double>( kNumCostClasses, 0.0 );
    double evaluate_seconds = 0.0; //!< evaluation seconds of all of them
    std::int64_t total() const;
    ClassWork& operator+=( const ClassWork& other ); //!< adds another tile's or batch's work
};

//! The time left of a run that computes its pending scenarios in order. A uniform sample of their
//! classes, taken once at the start, says how many scenarios of each class lie ahead of any
//! position. A scenario of class c costs what class c's scenarios cost so far in this run plus
//! the mean evaluation time per scenario; the time left is the elapsed time scaled by the cost
//! ahead over the cost done, so that ranks, threads and overheads need no model. With one class
//! this is the count-based ETA, elapsed · remaining / done.
class CostWeightedEta
{
  public:
    //! `sample[j]`: the class of the pending scenarios at positions
    //! [⌊j · pending / S⌋, ⌊(j + 1) · pending / S⌋), S = sample.size() (every scenario when
    //! S = pending).
    CostWeightedEta( std::vector<int> sample, std::uint64_t pending );

    struct Estimate
    {
        bool known = false; //!< false until some cost has been measured
        double seconds = 0.0;
        //! Some class ahead has no scenario done yet: its planning counts as 0, so the time left
        //! is at least `seconds`.
        bool lower_bound = false;
    };
    //! `done`: the work of this run so far (its scenarios are the first done.total() pending
    //! ones); `elapsed_s`: the time it took.
    Estimate estimate( const ClassWork& done, double elapsed_s ) const;

  private:
    std::vector<int> _sample;
    std::uint64_t _pending;
};

} // namespace detail
} // namespace shardsweep
