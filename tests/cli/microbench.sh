# scripts/microbench (the GPU microbenchmark users run): its torch-free parts (shape grids,
# --shapes reader, atomic CSV writer, dtype choice, progress bar) under Debian's python3.
set -u
src=$(cd "$2" && pwd)
cd "$src" && /usr/bin/python3 -m unittest scripts/microbench/test_microbench.py 2>&1 | tail -3
exit "${PIPESTATUS[0]}"
