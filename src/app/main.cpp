// shardsweep: the command-line program. Everything happens in the library (src/cli/dispatch.cpp).
#include <shardsweep/cli/commands.hpp>

int main( int argc, char* argv[] )
{
    return shardsweep::runMain( argc, argv );
}
