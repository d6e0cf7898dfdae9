#!/usr/bin/env bash
# Runs the CUDA build on a GPU machine that has a driver but not shardsweep's Debian stack (no
# Open MPI, HDF5, fmt, yaml-cpp or Boost; a cluster's GPU node, or a lent machine that reaches no
# package mirror).
#
#   scripts/cuda_bundle.sh pack OUT.tar.xz     # here, after scripts/build_cuda.sh
#   scripts/cuda_bundle.sh unpack OUT.tar.xz DIR   # there; prints the environment to source
#
# The bundle holds build-cuda's program and CUDA tests, Open MPI's mpirun (for the MPI tests),
# every shared library they load (Debian's, CUDA 11.8's runtime among them; not glibc, and not the
# driver's libcuda, which must match the machine's kernel module), and Open MPI's components, help
# texts and defaults, found through OPAL_PKGLIBDIR/OPAL_PKGDATADIR/OPAL_SYSCONFDIR (PMIx' through
# PMIX_INSTALL_PREFIX). A process started without mpirun is an isolated singleton, and mpirun
# starts its ranks on this machine alone (plm isolated): no orted, rsh or ssh needed. xz with a dictionary larger
# than one binary stores the tests' shared library code once.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode="${1:-}"
# SHARDSWEEP_CUDA_BUILD_DIR as in build_cuda.sh; SHARDSWEEP_BUNDLE_BACKEND=OPENMP packs a host build
# (to check the bundle on a machine without a GPU).
build="${SHARDSWEEP_CUDA_BUILD_DIR:-${repo_root}/build-cuda}"
backend="${SHARDSWEEP_BUNDLE_BACKEND:-CUDA}"

ompi_pkglib=/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3
# Components for fabrics a single GPU machine does not have; they would only fail to load.
ompi_skip='(ofi|openib|psm|ucx|verbs|cuda)'

pack()
{
    local out="$1" stage
    stage="$(mktemp -d)"
    trap 'rm -rf "${stage}"' RETURN
    mkdir -p "${stage}/bin" "${stage}/tests" "${stage}/lib" "${stage}/ompi/lib"
    cp "${build}/src/shardsweep" "${stage}/bin/"
    # The source tree the build reads inputs/ from (SHARDSWEEP_SOURCE_DIR), for scripts/gpu_checks.sh.
    sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "${build}/CMakeCache.txt" >"${stage}/source_dir"
    cp "$(readlink -f "$(command -v mpirun)")" "${stage}/bin/mpirun" # the MPI tests' launcher
    cp "${build}"/tests/tst*_"${backend}" "${stage}/tests/"
    find "${ompi_pkglib}" -maxdepth 1 -name '*.so' | grep -Ev "${ompi_skip}" |
        xargs -I{} cp {} "${stage}/ompi/lib/"
    cp -r /usr/share/openmpi "${stage}/ompi/share"
    cp -r /etc/openmpi "${stage}/ompi/etc"
    mkdir -p "${stage}/pmix/lib" # PMIx' components and help texts, for mpirun
    cp -r /usr/lib/x86_64-linux-gnu/pmix2/lib/pmix "${stage}/pmix/lib/"
    cp -r /usr/lib/x86_64-linux-gnu/pmix2/share "${stage}/pmix/"
    # Every library the binaries and the components load, glibc's own excepted.
    {
        for f in "${stage}"/bin/* "${stage}"/tests/* "${stage}"/ompi/lib/*.so "${stage}"/pmix/lib/pmix/*.so; do
            ldd "$f"
        done
    } | awk '/=> \// { print $3 }' | sort -u |
        grep -Ev '/(libc|libm|libdl|libpthread|librt|libresolv|ld-linux-x86-64)\.so' |
        xargs -I{} cp -L {} "${stage}/lib/"
    tar -C "${stage}" -cf - . | xz -6 --lzma2=dict=192MiB -T1 >"${out}"
    echo "[cuda_bundle] ${out}: $(du -h "${out}" | cut -f1)" >&2
}

unpack()
{
    local archive="$1" dir="$2"
    mkdir -p "${dir}"
    xz -dc "${archive}" | tar -C "${dir}" -xf -
    dir="$(cd "${dir}" && pwd)"
    cat <<EOF
export LD_LIBRARY_PATH="${dir}/lib\${LD_LIBRARY_PATH:+:\${LD_LIBRARY_PATH}}"
export OPAL_PKGLIBDIR="${dir}/ompi/lib" OPAL_PKGDATADIR="${dir}/ompi/share"
export OPAL_SYSCONFDIR="${dir}/ompi/etc" OMPI_MCA_ess_singleton_isolated=1
export PMIX_INSTALL_PREFIX="${dir}/pmix" OMPI_MCA_plm=isolated OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
EOF
}

case "${mode}" in
pack) pack "${2:?pack OUT.tar.xz}" ;;
unpack) unpack "${2:?unpack ARCHIVE DIR}" "${3:?unpack ARCHIVE DIR}" ;;
*)
    sed -n '2,14p' "${BASH_SOURCE[0]}" >&2
    exit 2
    ;;
esac
