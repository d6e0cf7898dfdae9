#pragma once
// The sweep engine's list of pending scenario ids (not installed).
#include <algorithm>
#include <cstdint>
#include <vector>

namespace shardsweep
{
namespace detail
{

//! Maps positions in the list of pending ids to ids (pending ids as sorted ranges).
class PendingIds
{
  public:
    //! The ids of [first, end) not done.
    PendingIds( const std::vector<std::uint8_t>& done_bits, std::uint64_t first, std::uint64_t end )
    {
        std::uint64_t i = first;
        while ( i < end )
        {
            while ( i < end && isDone( done_bits, i ) )
                ++i;
            const std::uint64_t begin = i;
            while ( i < end && !isDone( done_bits, i ) )
                ++i;
            if ( i > begin )
            {
                _begin.push_back( begin );
                _position.push_back( _count );
                _count += i - begin;
            }
        }
    }
    static bool isDone( const std::vector<std::uint8_t>& bits, std::uint64_t i )
    {
        return !bits.empty() && ( bits[i >> 3] >> ( i & 7 ) ) & 1;
    }
    std::uint64_t count() const { return _count; }
    //! Ids at positions [from, to).
    void ids( std::uint64_t from, std::uint64_t to, std::vector<std::uint64_t>& out ) const
    {
        out.clear();
        auto it = std::upper_bound( _position.begin(), _position.end(), from );
        std::size_t r = std::size_t( it - _position.begin() ) - 1;
        for ( std::uint64_t p = from; p < to; ++p )
        {
            while ( r + 1 < _position.size() && _position[r + 1] <= p )
                ++r;
            out.push_back( _begin[r] + ( p - _position[r] ) );
        }
    }

  private:
    std::vector<std::uint64_t> _begin, _position;
    std::uint64_t _count = 0;
};

} // namespace detail
} // namespace shardsweep
