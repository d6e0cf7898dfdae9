#pragma once
//! \file journal.hpp
//! \brief Per-rank append-only journals: one fsynced, checksummed record per batch of scenarios
//! (docs/HDF5_LAYOUT.md, "How the file is produced"). The journals are the sweep's source of
//! truth: the done-mask of a resumed run and the HDF5 file are both rebuilt from them.
//!
//! Record: a 48-byte header {magic, payload bytes, scenario/GPU/shard row counts, first and last
//! scenario id, header checksum, payload checksum} and the payload (ScenarioRow[], GpuRow[],
//! ShardRow[], native byte order: journals are not meant to move between machines).

#include <cstdint>
#include <functional>
#include <shardsweep/sweep/rows.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! The checksum of journal records, which detects torn and corrupted ones: 64-bit FNV-1a over
//! 8-byte words in four interleaved lanes (word i feeds lane i mod 4), the lanes folded at the
//! end. Four independent multiply chains keep the multiplier busy where one chain waits on each
//! product's latency, and the journal's thread and the results writer each run it over every
//! row. Pieces may be added in any split at 8-byte boundaries (the record's row arrays are whole
//! words); a piece whose size is not a multiple of 8 bytes must be the last (its tail bytes are
//! zero-padded into one more word).
class JournalChecksum
{
  public:
    void add( const void* data, std::size_t bytes );
    std::uint64_t value() const;

  private:
    static constexpr std::uint64_t kOffset = 0xcbf29ce484222325ull;
    std::uint64_t _lane[4] = { kOffset, kOffset + 1, kOffset + 2, kOffset + 3 };
    std::uint64_t _words = 0;
};

//! The JournalChecksum of one contiguous piece.
std::uint64_t journalChecksum( const void* data, std::size_t bytes );

//! The rows of one batch. Scenario rows are in increasing id order; GPU and shard rows follow
//! their scenarios' order.
struct JournalBatch
{
    std::vector<ScenarioRow> scenarios;
    std::vector<GpuRow> gpus;
    std::vector<ShardRow> shards;

    void clear()
    {
        scenarios.clear();
        gpus.clear();
        shards.clear();
    }
};

//! Where one valid record lies in its file.
struct JournalRecordInfo
{
    std::uint64_t offset = 0; //!< of the header
    std::uint64_t first_id = 0;
    std::uint64_t last_id = 0;
    std::uint32_t num_scenarios = 0;
    std::uint32_t num_gpus = 0;
    std::uint32_t num_shards = 0;
};

//! Appends records to one journal file (created, or opened for append) and fsyncs each.
class JournalWriter
{
  public:
    explicit JournalWriter( const std::string& path );
    ~JournalWriter();
    JournalWriter( const JournalWriter& ) = delete;
    JournalWriter& operator=( const JournalWriter& ) = delete;

    //! Writes one record and returns once it is on stable storage (write + fdatasync). Returns
    //! where the record lies (what scanJournal would find), so that a run need not read its own
    //! journal again to list what it wrote.
    JournalRecordInfo append( const JournalBatch& batch );
    //! Bytes written so far by this writer.
    std::uint64_t bytesWritten() const { return _bytes; }
    const std::string& path() const { return _path; }

  private:
    std::string _path;
    int _fd = -1;
    std::uint64_t _start = 0; //!< size of the file when opened: offset of the first record
    std::uint64_t _bytes = 0;
};

//! The valid records of one journal file.
struct JournalScan
{
    std::string path;
    std::vector<JournalRecordInfo> records;
    std::uint64_t valid_bytes = 0; //!< length of the valid prefix
    bool torn_tail = false;        //!< the file ends in an incomplete record (dropped)
};

//! Reads and verifies every record of `path`. A record cut short at the end of the file is a torn
//! tail (dropped); a corrupted record followed by more data throws std::runtime_error naming the
//! file and offset (a damaged journal is never silently skipped).
JournalScan scanJournal( const std::string& path );

//! Reads one record found by scanJournal (verifying its checksum again).
JournalBatch readJournalRecord( const std::string& path, const JournalRecordInfo& record );
//! The same into `into`, whose vectors are resized in place: the rows are read straight into
//! them (no staging copy) and a caller that reuses one batch per record slot reuses its memory
//! (the results writer reads gigabytes of journal rows with `--detail all`).
void readJournalRecord( const std::string& path, const JournalRecordInfo& record,
                        JournalBatch& into );

//! The first half of a read that streams a record's shard rows instead of holding them: its
//! scenario and GPU rows into `into` (shard rows left empty). Nothing is verified until the
//! second half, readJournalShards.
void readJournalRecordHead( const std::string& path, const JournalRecordInfo& record,
                            JournalBatch& into );
//! The second half: the record's shard rows, `block_rows` at a time through `block`;
//! `consume( first, count )` sees rows [first, first + count) of the record in block[0, count).
//! Then checks the checksum of the whole record (`head` as readJournalRecordHead read it, and
//! the shard rows) and throws as readJournalRecord does when it fails. The results writer
//! scatters each block into its column buffers while the block is still in cache.
void readJournalShards(
    const std::string& path, const JournalRecordInfo& record, const JournalBatch& head,
    std::vector<ShardRow>& block, std::size_t block_rows,
    const std::function<void( std::size_t first, std::size_t count )>& consume );

} // namespace shardsweep
