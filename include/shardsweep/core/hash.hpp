#pragma once
//! \file hash.hpp
//! \brief A hash of 64-bit words, for the cost caches' keys (arrays of doubles compared with ==).

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace shardsweep
{

//! Multiply-xorshift over the bits of `n` doubles (equal keys with equal bits hash alike).
//! Word-wise: packing hashes every table of every scenario of a batch. Host code.
inline std::uint64_t hashWords( const double* key, std::size_t n )
{
    std::uint64_t h = 0x9e3779b97f4a7c15ull;
    for ( std::size_t i = 0; i < n; ++i )
    {
        std::uint64_t w;
        std::memcpy( &w, key + i, sizeof( w ) );
        h = ( h ^ w ) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    return h;
}

} // namespace shardsweep
