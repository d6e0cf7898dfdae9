#pragma once
//! \file sweep_yaml.hpp
//! \brief Reading sweep files (`kind: sweep`, docs/SWEEPS.md) and loading what they reference.

#include <shardsweep/scenario/scenario_space.hpp>
#include <shardsweep/scenario/sweep_config.hpp>
#include <string>

namespace shardsweep
{

//! Parses a sweep file: strict keys, ranges expanded, names checked, paths resolved against the
//! file's directory. Throws InputError ("file:line:col: field '...': expected ..., found ...").
//! Does not open the files the sweep names (see loadSweepInputs).
SweepConfig readSweep( const std::string& path );

//! Parses sweep text (tests); `name` stands for the file in messages, paths resolve against the
//! current directory.
SweepConfig parseSweep( const std::string& text, const std::string& name );

//! Reads every workload, platform and table pool the config names (each once).
SweepInputs loadSweepInputs( const SweepConfig& config );

//! readSweep + loadSweepInputs + ScenarioSpace: everything checked before any output is opened.
//! Errors of the combination (a GPU count a platform cannot take) become InputErrors naming the
//! sweep file.
ScenarioSpace loadScenarioSpace( const std::string& path );
ScenarioSpace loadScenarioSpace( const SweepConfig& config );

//! What `shardsweep validate` runs on a sweep file: parses it, loads everything it names and
//! builds the scenario space (throws InputError on the first problem).
void validateSweepFile( const std::string& path );

//! The default locality statistics (inputs/locality/dlrm_datasets_2021_locality_stats.txt in the
//! source or install tree).
std::string defaultLocalityFile();

} // namespace shardsweep
