#pragma once
//! \file locality_stats.hpp
//! \brief Parser of dlrm_datasets' `locality_stats.txt` (facebookresearch/dlrm_datasets 6f46ba79).
//!
//! A file is a sequence of 46-line blocks, one per batch file: the file name, "Locality stats
//! after processing N batches of size B", the index and unique-row totals, then two 17-bin
//! histograms (fraction of unique rows and fraction of accesses per reuse bin), each followed by
//! its bin edges and CDF. Copies of the 2021 and 2022 files ship in inputs/locality/.

#include <shardsweep/scenario/table_pool.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! All blocks of a locality_stats.txt file, in file order. Throws InputError (file:line:col) on
//! anything that does not follow the format (a bin missing, a value outside [0, 1], ...).
std::vector<LocalityTarget> readLocalityStats( const std::string& path );
//! Same from text; `name` stands for the file in messages.
std::vector<LocalityTarget> parseLocalityStats( const std::string& text, const std::string& name );

} // namespace shardsweep
