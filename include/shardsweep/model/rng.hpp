#pragma once
//! \file rng.hpp
//! \brief Counter-based random numbers: Philox-4x32-10 keyed by (seed, scenario id, stream).
//!
//! Every random choice of a scenario (generated task tables, dims, the `random` planner's seed)
//! is a pure function of (sweep seed, scenario id, stream). There is no generator state shared
//! between scenarios, so a scenario's inputs do not depend on which rank evaluates it or in what
//! order. Philox-4x32-10 (Salmon et al., SC'11, "Parallel random numbers: as easy as 1, 2, 3";
//! the Random123 reference) is implemented here so that host and device code use the same
//! bits; the known-answer vectors of Random123's kat_vectors are checked in tests/unit/tstRng.hpp.
//!
//! Layout: key = the 64-bit seed (two words); counter = (id low word, id high word, stream,
//! block). One block yields four 32-bit words; a stream draws blocks 0, 1, 2, ... in order.

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <shardsweep/model/math.hpp>

namespace shardsweep
{

//! Four 32-bit words, the unit Philox works on.
struct Philox4x32Block
{
    std::uint32_t v[4] = { 0, 0, 0, 0 };
};

namespace detail
{
KOKKOS_INLINE_FUNCTION void mulhilo32( std::uint32_t a, std::uint32_t b, std::uint32_t& hi,
                                       std::uint32_t& lo )
{
    const std::uint64_t product = static_cast<std::uint64_t>( a ) * static_cast<std::uint64_t>( b );
    hi = static_cast<std::uint32_t>( product >> 32 );
    lo = static_cast<std::uint32_t>( product );
}
} // namespace detail

//! Philox-4x32 with R rounds (R = 10 is the standard, "philox4x32_10").
//! \param counter the 128-bit counter as four words, word 0 least significant
//! \param key the 64-bit key as two words
template <int Rounds = 10>
KOKKOS_INLINE_FUNCTION Philox4x32Block philox4x32( Philox4x32Block counter, std::uint32_t key0,
                                                   std::uint32_t key1 )
{
    // Constants of the Random123 reference implementation (philox.h).
    constexpr std::uint32_t kMul0 = 0xD2511F53u;
    constexpr std::uint32_t kMul1 = 0xCD9E8D57u;
    constexpr std::uint32_t kWeyl0 = 0x9E3779B9u; // golden ratio
    constexpr std::uint32_t kWeyl1 = 0xBB67AE85u; // sqrt(3) - 1
    std::uint32_t* c = counter.v;
    for ( int round = 0; round < Rounds; ++round )
    {
        if ( round > 0 )
        {
            key0 += kWeyl0;
            key1 += kWeyl1;
        }
        std::uint32_t hi0, lo0, hi1, lo1;
        detail::mulhilo32( kMul0, c[0], hi0, lo0 );
        detail::mulhilo32( kMul1, c[2], hi1, lo1 );
        const std::uint32_t n0 = hi1 ^ c[1] ^ key0;
        const std::uint32_t n2 = hi0 ^ c[3] ^ key1;
        c[0] = n0;
        c[1] = lo1;
        c[2] = n2;
        c[3] = lo0;
    }
    return counter;
}

//! Well-known stream numbers, so that different uses of one scenario's randomness never
//! overlap. Planners and later issues take streams >= kStreamUser.
enum RngStream : std::uint32_t
{
    kStreamTaskTables = 1,   //!< which pool tables a generated task uses
    kStreamTaskDims = 2,     //!< per-table dims of a generated task
    kStreamTaskCount = 3,    //!< number of tables of a generated task
    kStreamPoolSplit = 4,    //!< DreamShard's train/test split of the pool
    kStreamScenarioSeed = 5, //!< the per-scenario seed handed to planners
    kStreamPoolTable = 6,    //!< synthetic pool: one table's parameters
    kStreamUser = 1024,
};

//! A sequential view of one (seed, id, stream) stream. Copyable, 32 bytes of state, no
//! allocation: cheap to create per scenario inside a kernel.
class CounterRng
{
  public:
    KOKKOS_INLINE_FUNCTION CounterRng( std::uint64_t seed, std::uint64_t id, std::uint32_t stream )
        : _key0( static_cast<std::uint32_t>( seed ) ),
          _key1( static_cast<std::uint32_t>( seed >> 32 ) ),
          _id_lo( static_cast<std::uint32_t>( id ) ),
          _id_hi( static_cast<std::uint32_t>( id >> 32 ) ), _stream( stream )
    {
    }

    //! The next 32 random bits.
    KOKKOS_INLINE_FUNCTION std::uint32_t next32()
    {
        if ( _used == 4 )
        {
            Philox4x32Block counter;
            counter.v[0] = _id_lo;
            counter.v[1] = _id_hi;
            counter.v[2] = _stream;
            counter.v[3] = _block++;
            _buffer = philox4x32<10>( counter, _key0, _key1 );
            _used = 0;
        }
        return _buffer.v[_used++];
    }

    //! The next 64 random bits (two words, the first one high).
    KOKKOS_INLINE_FUNCTION std::uint64_t next64()
    {
        const std::uint64_t hi = next32();
        return ( hi << 32 ) | next32();
    }

    //! Uniform double in [0, 1) with 53 random bits.
    KOKKOS_INLINE_FUNCTION double uniform()
    {
        return static_cast<double>( next64() >> 11 ) * ( 1.0 / 9007199254740992.0 );
    }

    //! Uniform double in [lo, hi).
    KOKKOS_INLINE_FUNCTION double uniform( double lo, double hi )
    {
        return lo + ( hi - lo ) * uniform();
    }

    //! Uniform integer in [lo, hi] (both inclusive), exactly unbiased: draws outside the largest
    //! multiple of the range are rejected (expected draws < 2).
    KOKKOS_INLINE_FUNCTION std::int64_t uniformInt( std::int64_t lo, std::int64_t hi )
    {
        const std::uint64_t range = static_cast<std::uint64_t>( hi - lo ) + 1u;
        if ( range == 0u ) // the full 64-bit range
            return static_cast<std::int64_t>( next64() );
        const std::uint64_t limit = ~std::uint64_t( 0 ) - ( ~std::uint64_t( 0 ) % range );
        std::uint64_t r = next64();
        while ( r >= limit )
            r = next64();
        return lo + static_cast<std::int64_t>( r % range );
    }

    //! Standard normal deviate (Box-Muller, one value per call; the partner is discarded so that
    //! the number of words consumed per call is fixed).
    KOKKOS_INLINE_FUNCTION double normal()
    {
        const double u1 = 1.0 - uniform(); // (0, 1]: log is finite
        const double u2 = uniform();
        return math::sqrt( -2.0 * math::log( u1 ) ) *
               SHARDSWEEP_KOKKOS_MATH::cos( 6.283185307179586476925 * u2 );
    }

  private:
    std::uint32_t _key0, _key1, _id_lo, _id_hi, _stream;
    std::uint32_t _block = 0;
    int _used = 4;
    Philox4x32Block _buffer;
};

//! Mixes two 64-bit values into one (SplitMix64 finaliser): derives a sub-seed, e.g. a
//! generator's seed from (sweep seed, generator ordinal), without correlating the two.
KOKKOS_INLINE_FUNCTION std::uint64_t mixSeed( std::uint64_t seed, std::uint64_t salt )
{
    std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * ( salt + 1u );
    z = ( z ^ ( z >> 30 ) ) * 0xBF58476D1CE4E5B9ull;
    z = ( z ^ ( z >> 27 ) ) * 0x94D049BB133111EBull;
    return z ^ ( z >> 31 );
}

//! Writes k distinct values of {0, ..., n-1} into out[0..k) in a deterministic random order
//! (a partial Fisher-Yates shuffle over a scratch array of n ints supplied by the caller).
//! Requires 0 <= k <= n.
KOKKOS_INLINE_FUNCTION void chooseWithoutReplacement( CounterRng& rng, int n, int k, int* scratch,
                                                      int* out )
{
    for ( int i = 0; i < n; ++i )
        scratch[i] = i;
    for ( int i = 0; i < k; ++i )
    {
        const int j = static_cast<int>( rng.uniformInt( i, n - 1 ) );
        const int t = scratch[i];
        scratch[i] = scratch[j];
        scratch[j] = t;
        out[i] = scratch[i];
    }
}

} // namespace shardsweep
