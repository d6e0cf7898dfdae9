#pragma once
//! \file torchrec_proposers.hpp
//! \brief TorchRec's proposers over the enumerated options (GreedyProposer, UniformProposer,
//! GridSearchProposer); internal to the TorchRec planner (torchrec_planner.hpp), not public API.
#include <shardsweep/plan/torchrec_planner.hpp>
#include <vector>

namespace shardsweep
{

using TorchrecProposal = std::vector<int>; //!< option index (into the enumerated list) per table

//! TorchrecGreedyProposer: per table the options by ascending score; after each
//! proposal the table whose current option needs the most storage moves on to
//! its next option.
class TorchrecGreedyProposer
{
  public:
    TorchrecGreedyProposer( const std::vector<std::vector<TorchrecOption>>& options, bool use_depth,
                            int threshold );
    //! The next proposal; false when the proposer has none left.
    bool propose( TorchrecProposal& p ) const;
    //! How the last proposal fared; moves the table with the largest current option on.
    void feedback( bool partitionable, double rating );

  private:
    const std::vector<std::vector<TorchrecOption>>& _options;
    std::vector<std::vector<int>> _sorted;
    std::vector<int> _current;
    int _threshold = 0;
    int _inferior = 0;
    double _best = 1e300;
    bool _done = false;
};

//! UniformProposer: for each sharding type every table offers, the best-scoring option per table.
std::vector<TorchrecProposal>
torchrecUniformProposals( const std::vector<std::vector<TorchrecOption>>& options );
//! GridSearchProposer: the Cartesian product of the score-sorted options (last table fastest);
//! nothing when it exceeds 1e4 proposals.
std::vector<TorchrecProposal>
torchrecGridProposals( const std::vector<std::vector<TorchrecOption>>& options );

} // namespace shardsweep
