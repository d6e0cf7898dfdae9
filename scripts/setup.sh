#!/usr/bin/env bash
# shardsweep set-up for Debian 12 (run as root). Idempotent: installs only the missing Debian
# packages and builds each Kokkos once into a project-local prefix.
#
#   scripts/setup.sh            # packages + Kokkos (OpenMP + Serial) in .deps/kokkos-openmp
#   scripts/setup.sh --cuda     # also Debian's CUDA 11.8 toolkit (non-free) with g++-11, and
#                               # Kokkos (CUDA for AMPERE80 + OpenMP + Serial) in .deps/kokkos-cuda
#   SHARDSWEEP_WITH_SLURM=0 scripts/setup.sh   # skip slurm-wlm/munge (used only by the job tests)
#
# Other systems: use the spack environment in spack.yaml (see README.md, "On a cluster").
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
deps_dir="${SHARDSWEEP_DEPS_DIR:-${repo_root}/.deps}"
work="${deps_dir}/kokkos-src"

say() { printf '[setup] %s\n' "$*"; }

with_cuda=0
for arg in "$@"; do
    case "${arg}" in
    --cuda) with_cuda=1 ;;
    -h | --help)
        sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        say "unknown argument '${arg}' (known: --cuda, --help)"
        exit 2
        ;;
    esac
done

if [[ ! -r /etc/debian_version ]] || ! command -v apt-get >/dev/null 2>&1; then
    say "this script supports Debian 12 only."
    say "On other systems build the dependency stack with spack: 'spack env activate ${repo_root} && spack install'"
    say "(see spack.yaml and README.md, section 'On a cluster')."
    exit 1
fi

# Private apt source lists under ${work}/apt keep the system's configuration untouched: deb-src
# lines for the trilinos source, and the contrib/non-free components for the CUDA toolkit.
system_sources() {
    if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
        cat /etc/apt/sources.list.d/debian.sources
    else
        grep -h '^deb ' /etc/apt/sources.list
    fi
}
private_apt() { # name, then a sed expression turning the system's lists into the private ones
    local dir="${work}/apt-$1"
    mkdir -p "${dir}/parts" "${dir}/lists/partial"
    if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
        system_sources | sed "$2" >"${dir}/parts/$1.sources"
    else
        system_sources | sed "$2" >"${dir}/parts/$1.list"
    fi
    apt_opts=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=${dir}/parts"
        -o "Dir::State::Lists=${dir}/lists")
}

install_missing() { # packages...; apt_opts may name private source lists
    local missing=() p
    for p in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$p")
        fi
    done
    if ((${#missing[@]} == 0)); then
        say "all $# Debian packages already installed"
        return
    fi
    if [[ $(id -u) -ne 0 ]]; then
        say "missing Debian packages: ${missing[*]}"
        say "run this script as root (or: sudo apt-get install ${missing[*]})"
        exit 1
    fi
    say "installing ${#missing[@]} Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    # A fresh VM often runs its own apt (unattended upgrades) at boot: wait for its lock (up to
    # 10 min) instead of failing at once.
    local lock_wait=(-o DPkg::Lock::Timeout=600)
    apt-get "${lock_wait[@]}" "${apt_opts[@]}" update -qq
    apt-get "${lock_wait[@]}" "${apt_opts[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

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
apt_opts=()
install_missing "${packages[@]}"

# Kokkos 3.4.1 from Debian's own trilinos source package (Debian's libtrilinos-kokkos-dev is
# Serial-only). Only packages/kokkos (12 MB) is kept, for the next Kokkos build.
kokkos_source() {
    kokkos_src=$(ls -d "${work}"/*/packages/kokkos 2>/dev/null | head -n1 || true)
    [[ -n "${kokkos_src}" ]] && return
    mkdir -p "${work}"
    cd "${work}"
    if ! ls trilinos_*.orig.tar.gz >/dev/null 2>&1; then
        private_apt src 's/^Types: deb$/Types: deb-src/; s/^deb /deb-src /'
        apt-get "${apt_opts[@]}" update -qq
        apt-get "${apt_opts[@]}" source --download-only trilinos >/dev/null
    fi
    local tarball
    tarball=$(ls trilinos_*.orig.tar.gz | head -n1)
    # Extract only Kokkos (about 5 s); no `tar | head` here: with pipefail its SIGPIPE would
    # abort the script.
    tar xzf "${tarball}" --wildcards '*/packages/kokkos/*'
    rm -f "${tarball}" trilinos_*.debian.tar.* trilinos_*.dsc
    kokkos_src=$(ls -d "${work}"/*/packages/kokkos 2>/dev/null | head -n1 || true)
    [[ -n "${kokkos_src}" ]] || { say "no packages/kokkos in ${tarball}"; exit 1; }
}

# Two fixes to Kokkos 3.4's CUDA backend, both made upstream later (idempotent):
# - its half_t conversions for CUDA >= 11.1 pass half_t where cuda_fp16.h wants __half and call a
#   __half2double that CUDA lacks; nvcc 11.8 rejects them even uninstantiated (fixed in Kokkos
#   3.6, kokkos/kokkos#4850 and #5022). The branch for older CUDA converts explicitly and is
#   correct for every version: use it always.
# - Kokkos::initialize aborts when the GPU's major compute capability differs from the compiled
#   one, although the driver runs the compiled PTX on any newer GPU: AMPERE80 code on an H100 or
#   H200 (sm_90) stopped there. Refuse only an older GPU; Kokkos still warns about the mismatch.
patch_kokkos_source() {
    sed -i 's|^#if (CUDA_VERSION < 11100)$|#if 1 // shardsweep: was (CUDA_VERSION < 11100)|' \
        "${kokkos_src}/core/src/Cuda/Kokkos_Cuda_Half.hpp"
    sed -i 's|^    if (compiled_major != cudaProp.major \|\| compiled_minor > cudaProp.minor) {$|    if (compiled_major > cudaProp.major \|\| (compiled_major == cudaProp.major \&\& compiled_minor > cudaProp.minor)) { // shardsweep: PTX runs on newer GPUs|' \
        "${kokkos_src}/core/src/Cuda/Kokkos_Cuda_Instance.cpp"
}

build_kokkos() { # prefix, label, extra cmake arguments...
    local prefix="$1" label="$2" build="${work}/build-$(basename "$1")"
    shift 2
    if [[ -f "${prefix}/lib/cmake/Kokkos/KokkosConfig.cmake" ]]; then
        say "Kokkos (${label}) already built in ${prefix}"
        return
    fi
    kokkos_source
    patch_kokkos_source
    say "building Kokkos 3.4.1 (${label}) from Debian's trilinos source package"
    rm -rf "${build}"
    cmake -S "${kokkos_src}" -B "${build}" -DCMAKE_BUILD_TYPE=Release \
        -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_SERIAL=ON -DCMAKE_CXX_STANDARD=17 \
        -DCMAKE_CXX_EXTENSIONS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
        -DCMAKE_INSTALL_PREFIX="${prefix}" "$@" >"${build}.log" 2>&1 ||
        { say "Kokkos configure failed: see ${build}.log"; exit 1; }
    cmake --build "${build}" -j "$(nproc)" >>"${build}.log" 2>&1 ||
        { say "Kokkos build failed: see ${build}.log"; exit 1; }
    cmake --install "${build}" >>"${build}.log" 2>&1
    rm -rf "${build}"
    say "Kokkos (${label}) installed in ${prefix}"
}

build_kokkos "${deps_dir}/kokkos-openmp" "OpenMP + Serial"

if ((with_cuda)); then
    # Debian's CUDA 11.8 toolkit is in the non-free component; its nvcc accepts g++ up to 11.
    private_apt cuda 's/^Components: main$/Components: main contrib non-free/; s/^\(deb .*\) main$/\1 main contrib non-free/'
    install_missing nvidia-cuda-toolkit g++-11
    apt_opts=()
    cuda_prefix="${deps_dir}/kokkos-cuda"
    kokkos_source
    # The compiler of the CUDA builds: Kokkos' nvcc_wrapper with Debian's nvcc and g++-11 as
    # host compiler. Another CUDA on the machine (/usr/local/cuda, CUDA_HOME) must not leak in:
    # its headers do not match Debian's nvcc. ccache recognises the wrapper as nvcc by its name.
    # Rewritten only when it changes: ccache keys objects on the compiler's modification time.
    mkdir -p "${cuda_prefix}/bin"
    compiler="${cuda_prefix}/bin/nvcc_wrapper_debian"
    cat >"${compiler}.new" <<WRAPPER
#!/bin/sh
# Written by scripts/setup.sh --cuda: Kokkos' nvcc_wrapper with Debian's nvcc and g++-11.
unset CUDA_HOME CUDA_PATH CUDA_ROOT CPATH LIBRARY_PATH
PATH=/usr/bin:\$PATH NVCC_WRAPPER_DEFAULT_COMPILER=g++-11 exec "${kokkos_src}/bin/nvcc_wrapper" "\$@"
WRAPPER
    if cmp -s "${compiler}.new" "${compiler}"; then
        rm "${compiler}.new"
    else
        mv "${compiler}.new" "${compiler}"
        chmod +x "${compiler}"
    fi
    unset CUDA_HOME CUDA_PATH CUDA_ROOT CPATH LIBRARY_PATH
    export PATH="/usr/bin:${PATH}"
    # AMPERE80 (sm_80 code plus its PTX): also runs on Hopper (H100/H200), JIT-compiled there.
    build_kokkos "${cuda_prefix}" "CUDA for AMPERE80 + OpenMP + Serial" \
        -DCMAKE_CXX_COMPILER="${compiler}" -DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_LAMBDA=ON \
        -DKokkos_ARCH_AMPERE80=ON
fi
say "done"
