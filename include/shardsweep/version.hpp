#pragma once
//! \file version.hpp
//! \brief Version and git hash of this build (generated at build time by cmake/GitVersion.cmake).

namespace shardsweep
{
const char* versionString();
const char* gitHash();
} // namespace shardsweep
