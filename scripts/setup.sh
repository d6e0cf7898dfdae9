#!/usr/bin/env bash
# shardsweep set-up for Debian 12 (run as root). Idempotent: installs only the missing Debian
# packages and builds Kokkos with the OpenMP backend once into a project-local prefix.
#
#   scripts/setup.sh            # packages + OpenMP Kokkos
#   SHARDSWEEP_WITH_SLURM=0 scripts/setup.sh   # skip slurm-wlm/munge (used only by the job tests)
#
# Other systems: use the spack environment in spack.yaml (see README.md, "On a cluster").
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
deps_dir="${SHARDSWEEP_DEPS_DIR:-${repo_root}/.deps}"
kokkos_prefix="${deps_dir}/kokkos-openmp"

say() { printf '[setup] %s\n' "$*"; }

if [[ ! -r /etc/debian_version ]] || ! command -v apt-get >/dev/null 2>&1; then
    say "this script supports Debian 12 only."
    say "On other systems build the dependency stack with spack: 'spack env activate ${repo_root} && spack install'"
    say "(see spack.yaml and README.md, section 'On a cluster')."
    exit 1
fi

packages=(
    build-essential cmake git pkg-config
    libopenmpi-dev openmpi-bin
    libhdf5-openmpi-dev hdf5-tools
    libtrilinos-kokkos-dev
    libboost-program-options-dev libfmt-dev libgtest-dev libyaml-cpp-dev
    python3 python3-numpy python3-h5py python3-pandas python3-matplotlib python3-sklearn python3-yaml
    clang-format ccache
    protobuf-compiler python3-protobuf
)
if [[ "${SHARDSWEEP_WITH_SLURM:-1}" == 1 ]]; then
    packages+=(slurm-wlm munge)
fi

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done
if ((${#missing[@]})); then
    if [[ $(id -u) -ne 0 ]]; then
        say "missing Debian packages: ${missing[*]}"
        say "run this script as root (or: sudo apt-get install ${missing[*]})"
        exit 1
    fi
    say "installing ${#missing[@]} Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    # A fresh VM often runs its own apt (unattended upgrades) at boot: wait for its lock (up to
    # 10 min) instead of failing at once.
    lock_wait=(-o DPkg::Lock::Timeout=600)
    apt-get "${lock_wait[@]}" update -qq
    apt-get "${lock_wait[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
    say "all ${#packages[@]} Debian packages already installed"
fi

# Kokkos with OpenMP: Debian's libtrilinos-kokkos-dev is Serial-only, so build Kokkos 3.4.1 from
# Debian's own trilinos source package. A private apt source list keeps the system config untouched.
if [[ -f "${kokkos_prefix}/lib/cmake/Kokkos/KokkosConfig.cmake" ]]; then
    say "Kokkos (OpenMP) already built in ${kokkos_prefix}"
else
    say "building Kokkos 3.4.1 (OpenMP + Serial) from Debian's trilinos source package"
    work="${deps_dir}/kokkos-src"
    mkdir -p "${work}/apt/parts" "${work}/apt/lists/partial"
    cd "${work}"
    if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
        sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources >apt/parts/debian-src.sources
    else
        grep -h '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' >apt/parts/debian-src.list
    fi
    apt_opts=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=${work}/apt/parts"
        -o "Dir::State::Lists=${work}/apt/lists")
    if ! ls trilinos_*.orig.tar.gz >/dev/null 2>&1; then
        apt-get "${apt_opts[@]}" update -qq
        apt-get "${apt_opts[@]}" source --download-only trilinos >/dev/null
    fi
    tarball=$(ls trilinos_*.orig.tar.gz | head -n1)
    # Extract only Kokkos (about 5 s); no `tar | head` here: with pipefail its SIGPIPE would
    # abort the script.
    tar xzf "${tarball}" --wildcards '*/packages/kokkos/*'
    top=""
    for d in */packages/kokkos; do top="${d%%/*}"; done
    [[ -n "${top}" ]] || { say "no packages/kokkos in ${tarball}"; exit 1; }
    cmake -S "${top}/packages/kokkos" -B build -DCMAKE_BUILD_TYPE=Release \
        -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_SERIAL=ON -DCMAKE_CXX_STANDARD=17 \
        -DCMAKE_CXX_EXTENSIONS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
        -DCMAKE_INSTALL_PREFIX="${kokkos_prefix}" >build.log 2>&1
    cmake --build build -j "$(nproc)" >>build.log 2>&1
    cmake --install build >>build.log 2>&1
    rm -rf "${top}" build "${tarball}" trilinos_*.debian.tar.* trilinos_*.dsc
    say "Kokkos (OpenMP) installed in ${kokkos_prefix}"
fi
say "done"
