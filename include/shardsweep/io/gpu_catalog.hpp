#pragma once
//! \file gpu_catalog.hpp
//! \brief The GPU catalog: one `kind: gpu` YAML file per GPU model in inputs/gpus/.
//!
//! Names are matched loosely: case, spaces, '_' and '-' are ignored, so NeuSight's device names
//! ("NVIDIA H100 80GB HBM3", file stems such as "Tesla_T4") find the entries listing them as
//! aliases. docs/INPUTS.md lists the fields.

#include <shardsweep/domain/hardware.hpp>
#include <shardsweep/io/yaml_util.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

struct GpuEntry
{
    std::string name;                 //!< catalog name, e.g. "H100-SXM-80GB"
    std::vector<std::string> aliases; //!< other names accepted by findGpu
    GpuSpec spec;
    std::string file; //!< where it was read from ("" for inline GPUs)
};

class GpuCatalog
{
  public:
    //! Reads every *.yaml / *.yml file of `dir` (each `kind: gpu`); throws InputError on a bad
    //! file or on a name/alias used twice.
    static GpuCatalog read( const std::string& dir );

    //! Adds an entry; throws InputError naming entry.file if a name or alias is taken.
    void add( const GpuEntry& entry );
    //! The entry called `name` (or with that alias), nullptr if none.
    const GpuEntry* find( const std::string& name ) const;
    //! Like find, but throws UsageError listing the known names (for command-line options).
    const GpuEntry& get( const std::string& name ) const;
    const std::vector<GpuEntry>& entries() const { return _entries; }
    //! Catalog names in file-name order.
    std::vector<std::string> names() const;

  private:
    std::vector<GpuEntry> _entries;
};

//! The key names are compared by: lower case, letters and digits only.
std::string normalizeGpuName( const std::string& name );

//! Parses a `kind: gpu` document (or, with `inline_gpu`, a `gpu:` mapping inside a platform file,
//! which has no `kind:`).
GpuEntry parseGpu( const YamlView& node, bool inline_gpu = false );
//! Reads one GPU file.
GpuEntry readGpuFile( const std::string& path );
//! GpuCatalog::read.
GpuCatalog readGpuCatalog( const std::string& dir );

//! $SHARDSWEEP_GPU_CATALOG if set, else <source>/inputs/gpus if it exists, else the installed
//! <datadir>/shardsweep/inputs/gpus.
std::string defaultGpuCatalogDir();
//! The default catalog, read once (thread-safe).
const GpuCatalog& defaultGpuCatalog();
//! defaultGpuCatalog().get( name ): throws UsageError for an unknown GPU.
const GpuEntry& findGpu( const std::string& name );

//! Per-direction x16 PCIe bandwidth (GB/s, 1e9 B) of a generation: 3 → 15.75, 4 → 31.5, 5 → 63.
double pcieX16BandwidthGBps( int generation );

} // namespace shardsweep
