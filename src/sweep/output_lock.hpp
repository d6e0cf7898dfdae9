#pragma once
// The lock that keeps two runs off one output at the same time (not installed).
#include <functional>
#include <stdexcept>
#include <string>

namespace shardsweep
{
namespace detail
{

//! An open file description lock (Linux's OFD locks: they conflict between any two opens, also
//! within one process, and go with the last descriptor of the open) on OUT.h5.journal/lock.
//! Every rank of a run holds it shared for the whole run; a new run's rank 0 must first get it
//! exclusive, which it cannot while any process of an earlier run is alive: e.g. ranks orphaned
//! when their mpirun was killed, which go on with the sweep and would journal the same scenarios
//! and write the same file as the new run (issue 21).
class OutputLock
{
  public:
    //! Thrown when the lock is still held by another run after the wait.
    struct Busy : std::runtime_error
    {
        using std::runtime_error::runtime_error;
    };

    OutputLock() = default;
    ~OutputLock();
    OutputLock( OutputLock&& other ) noexcept;
    OutputLock& operator=( OutputLock&& other ) noexcept;
    OutputLock( const OutputLock& ) = delete;
    OutputLock& operator=( const OutputLock& ) = delete;

    //! Takes the lock of `dir` (created if missing) exclusive and then shared, waiting up to
    //! `wait_s` seconds for holders to go and calling `waiting( seconds_so_far )` about every
    //! 10 s while it waits. Throws Busy when it is still held then, std::runtime_error when the
    //! lock file cannot be created. A file system
    //! without such locks (some network ones) gives an unlocked OutputLock and a warning in
    //! `warning()`.
    //!
    //! `abandon` (when set) is asked before every attempt, the first included; once it says
    //! true the wait ends with an unheld, abandoned() lock and nothing more is created. A run
    //! whose launcher was killed while it started must not touch the output: the run it waited
    //! for may have finished and removed the journal directory, which a late attempt would
    //! create again next to the finished file.
    static OutputLock exclusiveThenShared( const std::string& dir, double wait_s,
                                           const std::function<void( double )>& waiting,
                                           const std::function<bool()>& abandon = {} );
    //! Takes the lock of `dir` shared (the other ranks, once rank 0 holds it: waits only while a
    //! starting run's rank 0 holds it exclusive for a moment). `abandon` as above: a rank whose
    //! launcher died after its rank 0 took the lock must not create it again either.
    static OutputLock shared( const std::string& dir, double wait_s,
                              const std::function<bool()>& abandon = {} );

    bool held() const { return _fd >= 0; }
    //! True when exclusiveThenShared or shared gave up because `abandon` said so.
    bool abandoned() const { return _abandoned; }
    const std::string& warning() const { return _warning; }
    //! The lock file of an output's journal directory.
    static std::string path( const std::string& dir ) { return dir + "/lock"; }

  private:
    //! The lock taken as `first` (F_WRLCK or F_RDLCK), then held shared.
    static OutputLock take( const std::string& dir, short first, double wait_s,
                            const std::function<void( double )>& waiting,
                            const std::function<bool()>& abandon );

    int _fd = -1;
    bool _abandoned = false;
    std::string _warning;
};

} // namespace detail
} // namespace shardsweep
