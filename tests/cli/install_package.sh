# `cmake --install` gives a package that find_package(shardsweep) finds from the install prefix:
# a consumer project links shardsweep::core and reproduces a collective golden value.
set -u
exe=$1 src=$2 scratch=$3
fail() { echo "FAIL: $*"; exit 1; }
build=$(cd "$(dirname "$exe")/.." && pwd)
rm -rf "$scratch" && mkdir -p "$scratch/consumer" || exit 1
cmake --install "$build" --prefix "$scratch/prefix" >"$scratch/install.log" 2>&1 || fail "install: $(tail -5 "$scratch/install.log")"
[ -f "$scratch/prefix/lib/cmake/shardsweep/shardsweepConfig.cmake" ] || fail "no package config installed"
[ -x "$scratch/prefix/bin/shardsweep" ] || fail "no installed executable"
cat > "$scratch/consumer/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.20)
project(consumer LANGUAGES C CXX)
find_package(shardsweep REQUIRED)
add_executable(consumer main.cpp)
target_link_libraries(consumer PRIVATE shardsweep::core)
CMAKE
cat > "$scratch/consumer/main.cpp" <<'CPP'
#include <shardsweep/model/collectives.hpp>
#include <cstdio>
int main()
{
    shardsweep::Network net;
    net.num_dims = 1;
    net.dims[0] = { shardsweep::Topology::Ring, 8, 50.0, 500.0 };
    shardsweep::SystemConfig sys;
    sys.local_mem_bw_GBps = 3350;
    std::printf( "%.0f\n", shardsweep::collectiveTimeNs( net, sys, shardsweep::Collective::all_reduce, 1048576.0 ) );
}
CPP
prefix_path="$scratch/prefix"
[ -d "$src/.deps/kokkos-openmp" ] && prefix_path="$prefix_path;$src/.deps/kokkos-openmp"
cmake -S "$scratch/consumer" -B "$scratch/consumer/build" -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_PREFIX_PATH=$prefix_path" >"$scratch/configure.log" 2>&1 || fail "configure: $(tail -8 "$scratch/configure.log")"
cmake --build "$scratch/consumer/build" >"$scratch/build.log" 2>&1 || fail "build: $(tail -8 "$scratch/build.log")"
out=$("$scratch/consumer/build/consumer") || fail "consumer run"
[ "$out" = "42143" ] || fail "consumer printed '$out', expected 42143 (ASTRA-sim congestion-unaware backend)"
"$scratch/prefix/bin/shardsweep" --version | grep -q "^shardsweep" || fail "installed shardsweep --version"
echo "install + find_package OK"
