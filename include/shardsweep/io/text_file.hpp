#pragma once
//! \file text_file.hpp
//! \brief Whole text files in and out: reading one (a sweep, a calibration hashed into a sweep)
//! and writing one so that an interrupted run leaves no half-written file (calibrations, platforms,
//! the predict commands' --output).

#include <string>

namespace shardsweep
{

//! The file's whole text; InputError "cannot open file for reading" when it cannot be read.
std::string readTextFile( const std::string& path );

//! Writes `text` to `path` through `path`.tmp renamed into place; InputError when it cannot (the
//! temporary file is removed).
void writeTextFileAtomically( const std::string& path, const std::string& text );

} // namespace shardsweep
