#pragma once
// What the input-file tests share: the shipped inputs' folder, the GPU catalog read once, and the
// check that a call throws InputError with exactly the expected "file:line:col: field ..." text.
#include <functional>
#include <gtest/gtest.h>
#include <shardsweep/build_paths.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/gpu_catalog.hpp>
#include <string>

namespace Test
{

using namespace shardsweep;

const std::string kInputs = std::string( SHARDSWEEP_SOURCE_DIR ) + "/inputs";

// Runs f, which must throw InputError with exactly `message`.
inline void expectInputError( const std::function<void()>& f, const std::string& message )
{
    try
    {
        f();
        ADD_FAILURE() << "no error, expected: " << message;
    }
    catch ( const InputError& e )
    {
        EXPECT_EQ( std::string( e.what() ), message );
    }
}

inline const GpuCatalog& catalog()
{
    static GpuCatalog c = readGpuCatalog( kInputs + "/gpus" );
    return c;
}

} // namespace Test
