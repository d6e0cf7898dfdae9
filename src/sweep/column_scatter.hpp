#pragma once
// Column layout of row structs for the results writer (not installed): rows are scattered into
// one packed buffer per column, cache-blocked, then each buffer is one HDF5 write.
#include <algorithm>
#include <cstring>
#include <memory>
#include <shardsweep/io/hdf5.hpp>
#include <shardsweep/sweep/rows.hpp>
#include <vector>

namespace shardsweep
{
namespace detail
{

//! Consecutive rows of one journal batch, in place: the writer lays columns out straight from
//! the journal rows it read instead of copying every row into a staging vector first.
template <class Row>
struct RowSpan
{
    const Row* first;
    std::size_t count;
};

//! One column per buffer, not zero-filled (every byte is written before it is used) and kept
//! across windows, so that its pages are faulted in once per run.
class ColumnBuffers
{
  public:
    void resize( const std::vector<ColumnSpec>& columns, std::size_t rows )
    {
        _data.resize( columns.size() );
        _capacity.resize( columns.size(), 0 );
        for ( std::size_t k = 0; k < columns.size(); ++k )
        {
            const std::size_t bytes =
                std::max<std::size_t>( rows * typeBytes( columns[k].type ), 1 );
            if ( bytes > _capacity[k] )
            {
                _data[k].reset( new char[bytes] );
                _capacity[k] = bytes;
            }
        }
    }
    char* column( std::size_t k ) { return _data[k].get(); }

  private:
    std::vector<std::unique_ptr<char[]>> _data;
    std::vector<std::size_t> _capacity;
};

//! Copies one field of `n` rows into a packed column. The field size is a compile-time constant
//! so that the copy inlines: a memcpy call per element was ~10 % of a sweep's CPU time.
template <std::size_t Bytes, class Row>
void copyField( const Row* rows, std::size_t n, std::size_t offset, char* out )
{
    for ( std::size_t i = 0; i < n; ++i, out += Bytes )
        std::memcpy( out, reinterpret_cast<const char*>( rows + i ) + offset, Bytes );
}

//! Scatters `n` rows into every column, at row `dest` of each. Cache-blocked: a block of rows
//! small enough for L1/L2 is copied into all columns before the next block is touched, so the
//! rows are read from memory once instead of once per column (33 passes over a window's ~200 MB
//! of shard rows were the writer's largest cost).
template <class Row>
void scatterRows( const Row* rows, std::size_t n, std::size_t dest,
                  const std::vector<ColumnSpec>& columns, ColumnBuffers& out )
{
    constexpr std::size_t kBlock = std::max<std::size_t>( 32768 / sizeof( Row ), 1 );
    for ( std::size_t b = 0; b < n; b += kBlock )
    {
        const std::size_t m = std::min( kBlock, n - b );
        for ( std::size_t k = 0; k < columns.size(); ++k )
        {
            const std::size_t bytes = typeBytes( columns[k].type );
            char* to = out.column( k ) + ( dest + b ) * bytes;
            switch ( bytes )
            {
            case 1:
                copyField<1>( rows + b, m, columns[k].offset, to );
                break;
            case 4:
                copyField<4>( rows + b, m, columns[k].offset, to );
                break;
            default:
                copyField<8>( rows + b, m, columns[k].offset, to );
                break;
            }
        }
    }
}

//! Writes every filled column into `runs`, independently of the other ranks: a window's rows
//! are usually one batch, hence one rank's, and in a collective write the others only waited
//! (spinning) for it. A rank without rows in the window skips it.
inline void writeColumns( std::vector<h5::Dataset>& sets, const std::vector<ColumnSpec>& columns,
                          const std::vector<h5::Run>& runs, ColumnBuffers& buffers )
{
    if ( runs.empty() )
        return;
    for ( std::size_t k = 0; k < columns.size(); ++k )
        sets[k].writeRaw( runs, columns[k].type, buffers.column( k ), false );
}

} // namespace detail
} // namespace shardsweep
