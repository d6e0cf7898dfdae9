#pragma once
//! \file mpi_environment.hpp
//! \brief RAII ownership of MPI_Init/MPI_Finalize for the program (raw MPI calls stay in
//! parallel/).

#include <mpi.h>
#include <string>

namespace shardsweep
{

class MpiEnvironment
{
  public:
    MpiEnvironment( int& argc, char**& argv );
    ~MpiEnvironment();
    MpiEnvironment( const MpiEnvironment& ) = delete;
    MpiEnvironment& operator=( const MpiEnvironment& ) = delete;

    int rank() const { return _rank; }
    int size() const { return _size; }
    //! "Open MPI v4.1.4, ..." (first line of MPI_Get_library_version).
    static std::string libraryVersion();
    //! Ends every rank with `code` (for failures that only one rank saw).
    [[noreturn]] static void abort( int code );
    //! True if any rank passes true (collective).
    static bool anyRank( bool flag, MPI_Comm comm = MPI_COMM_WORLD );

  private:
    int _rank = 0;
    int _size = 1;
    bool _owns = false;
};

} // namespace shardsweep
