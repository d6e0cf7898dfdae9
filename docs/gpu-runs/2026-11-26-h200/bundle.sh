#!/usr/bin/env bash
# The record of how docs/gpu-runs/2026-11-26-h200 was made (see README.md there); not part
# of the build.
# Bundles the CUDA build (stripped binaries + non-system shared libs + Open MPI plugins) into
# /work/main/.devcarry for the device machine.
set -euo pipefail
cd /work/main
rm -rf .devcarry && mkdir -p .devcarry/stage/bin .devcarry/stage/lib .devcarry/stage/libstd .devcarry/stage/ompi
grep -q '^/.devcarry/' .git/info/exclude || echo /.devcarry/ >>.git/info/exclude
bins=(build-cuda/src/shardsweep $(ls build-cuda/tests/tst*_CUDA 2>/dev/null || true))
for b in "${bins[@]}"; do strip -o .devcarry/stage/bin/$(basename $b) $b; done
plugins=(/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/*.so /usr/lib/x86_64-linux-gnu/pmix2/lib/pmix/*.so)
cp -a /usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3 .devcarry/stage/ompi/openmpi3
[ -d /usr/lib/x86_64-linux-gnu/pmix2/lib/pmix ] && cp -a /usr/lib/x86_64-linux-gnu/pmix2/lib/pmix .devcarry/stage/ompi/pmix
mkdir -p .devcarry/stage/ompi/share && cp -a /usr/share/openmpi .devcarry/stage/ompi/share/ 2>/dev/null || true
cp -a /usr/share/pmix .devcarry/stage/ompi/share/ 2>/dev/null || true
for f in "${bins[@]}" "${plugins[@]}"; do ldd "$f" 2>/dev/null | awk '/=> \//{print $3}'; done | sort -u | while read -r lib; do
  base=$(basename "$lib")
  case "$base" in
    libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*|libcuda.so.*|libnvidia*) ;;
    libstdc++.so.*|libgcc_s.so.*) cp -L "$lib" .devcarry/stage/libstd/ ;;
    *) cp -L "$lib" .devcarry/stage/lib/ ;;
  esac
done
du -sh .devcarry/stage/*
tar -C .devcarry/stage -cf - . | xz -T2 --lzma2=preset=6,dict=256MiB >.devcarry/bundle.tar.xz && rm -rf .devcarry/stage
ls -la .devcarry
