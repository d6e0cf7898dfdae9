#pragma once
//! \file input_text.hpp
//! \brief Numbers and names as input files write them: parsing numbers (YAML 1.1 digit separators
//! such as 40_000_000 accepted), formatting them back exactly, and the wording of error messages
//! (lists of names, "did you mean" suggestions for typos). Used by the YAML reader (yaml_util.hpp)
//! and the other input readers.
#include <cstdint>
#include <shardsweep/core/number_text.hpp> // formatNumber
#include <string>
#include <vector>

namespace shardsweep
{

//! `s` in lower case (ASCII).
std::string lowerCase( std::string s );
//! Parses a decimal number (digit separators allowed); false if `text` is not one.
bool parseNumber( const std::string& text, double& value );
//! Parses an integer (also written as 4e7 or 40_000_000); false if `text` is not one.
bool parseInteger( const std::string& text, std::int64_t& value );
//! " (did you mean 'x'?)" for the closest of `names`, or "" if none is close.
std::string didYouMean( const std::string& word, const std::vector<std::string>& names );

//! The entry of `names` closest to `word` (case-insensitive edit distance), or "" if none is
//! close enough to be a plausible typo.
std::string closestName( const std::string& word, const std::vector<std::string>& names );

} // namespace shardsweep
