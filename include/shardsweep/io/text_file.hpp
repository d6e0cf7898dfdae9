#pragma once
//! \file text_file.hpp
//! \brief Whole text files in and out: reading one (a sweep, a calibration hashed into a sweep)
//! and writing one so that an interrupted run leaves no half-written file (calibrations, platforms,
//! the predict commands' --output).

#include <cstdint>
#include <map>
#include <string>

namespace shardsweep
{

//! The file's whole text; InputError "cannot open `what` for reading" when it cannot be read.
//! Every input reader goes through it (YAML, CSV, learned models, locality statistics), so an
//! InputFileRecorder sees every file an input was built from.
std::string readTextFile( const std::string& path, const std::string& what = "file" );

//! While alive, records the text of every file readTextFile reads on this thread (scopes nest:
//! an inner recorder also reports to the outer one). A sweep's configuration hash covers the
//! fingerprint of everything it read: a resume after a platform, workload, calibration or model
//! file changed is refused instead of mixing rows of two models in one results file.
class InputFileRecorder
{
  public:
    InputFileRecorder();
    ~InputFileRecorder();
    InputFileRecorder( const InputFileRecorder& ) = delete;
    InputFileRecorder& operator=( const InputFileRecorder& ) = delete;

    //! FNV-1a 64 over the files' FNV-1a 64 hashes in ascending order: the contents only, so the
    //! same inputs moved to another folder keep their fingerprint. 0 when nothing was read.
    std::uint64_t fingerprint() const;

  private:
    friend std::string readTextFile( const std::string&, const std::string& );
    void record( const std::string& path, const std::string& text );

    std::map<std::string, std::uint64_t> _hashes; //!< per path as given, of its text
    InputFileRecorder* _outer;
};

//! Writes `text` to `path` through `path`.tmp renamed into place; InputError when it cannot (the
//! temporary file is removed).
void writeTextFileAtomically( const std::string& path, const std::string& text );

} // namespace shardsweep
