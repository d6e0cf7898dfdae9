"""The torch-free half of the GPU microbenchmark (microbench.py): dtype names and sizes, the seeded
shape grids, the --shapes reader, the atomic CSV writer and the progress bar. Everything here runs
with the Python standard library alone, so scripts/microbench/test_microbench.py tests it without a
GPU and `microbench.py --dry-run` plans a run without torch.
"""
import csv
import math
import os
import random
import sys
import time
from collections import namedtuple

# ---------------------------------------------------------------------------------------------
# Names and sizes (no torch)

#: Every GEMM dtype, in the order the script runs them.
ALL_DTYPES = ("fp32", "tf32", "fp16", "bf16", "fp8")
#: Bytes per element of A and W; C is fp32 for fp32/tf32, fp16/bf16 as A, bf16 for fp8.
ELEMENT_BYTES = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8": 1}
RESULT_BYTES = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8": 2}
GEMM_OPS = ("bmm", "linear")
#: Dtypes the operators run in (element-wise kernels have no tf32 or fp8 variant).
OP_DTYPES = ("fp32", "fp16", "bf16")
#: Operator names (NeuSight's, as `shardsweep predict op` reads them) and their tensor inputs.
OPS = ("softmax", "ln", "add", "mul", "div", "pow", "addu", "mulu", "divu", "powu",
       "gelu", "relu", "tanh")
OP_INPUTS = {"add": 2, "mul": 2, "div": 2, "pow": 2}  # every other op reads one [B,H] tensor

GEMM_HEADER = ("B", "M", "N", "K", "dtype", "op", "latency_ms")
OPS_HEADER = ("op", "B", "H", "dtype", "latency_ms")

# Grid ranges (inclusive).
GEMM_B_RANGE = (1, 64)
GEMM_DIM_RANGE = (16, 8192)
LINEAR_M_RANGE = (16, 16384)
OP_B_RANGE = (1, 65536)
OP_H_RANGE = (32, 65536)
FP8_MULTIPLE = 16  # torch._scaled_mm (cuBLASLt FP8) wants M, N, K divisible by 16
#: Grid GEMM dimensions are multiples of this: cuBLAS takes its tensor-core kernels with 16-byte
#: vector loads only when the leading dimensions allow them (an H100 ran 16-bit GEMMs with
#: dimensions off multiples of 8 about 3 times slower, scripts/microbench/README.md); training
#: shapes are multiples of 64 or more, so the default grid measures the kernels they run.
DEFAULT_GEMM_ALIGN = 8

DEFAULT_MAX_BYTES = 2 << 30  # 2 GiB
#: A grid gives up after this many draws per requested shape (only a tiny --max-bytes needs it).
MAX_DRAWS_PER_SHAPE = 1000

GemmShape = namedtuple("GemmShape", "B M N K dtype op")
OpShape = namedtuple("OpShape", "op B H dtype")


def gemm_bytes(s):
    """Bytes of A, W and C of a GEMM shape (a linear's W[N,K] is shared by the B batches)."""
    w = s.K * s.N if s.op == "linear" else s.B * s.K * s.N
    return (s.B * s.M * s.K + w) * ELEMENT_BYTES[s.dtype] + s.B * s.M * s.N * RESULT_BYTES[s.dtype]


def op_bytes(s):
    """Bytes of an operator's [B,H] inputs and its output (layer norm's weight and bias aside)."""
    return (OP_INPUTS.get(s.op, 1) + 1) * s.B * s.H * ELEMENT_BYTES[s.dtype]


def fp8_shape_ok(s):
    """Whether torch._scaled_mm can run a shape: B = 1 and M, N, K multiples of 16."""
    return s.B == 1 and all(d % FP8_MULTIPLE == 0 for d in (s.M, s.N, s.K))


def supported_dtypes(capability, has_scaled_mm):
    """The dtypes a GPU of compute capability (major, minor) runs natively: fp32 and fp16
    always, tf32 and bf16 from 8.0 (Ampere), fp8 from 8.9 (Ada, Hopper) when torch has
    torch._scaled_mm."""
    cc = tuple(capability)
    out = ["fp32"]
    if cc >= (8, 0):
        out.append("tf32")
    out.append("fp16")
    if cc >= (8, 0):
        out.append("bf16")
    if cc >= (8, 9) and has_scaled_mm:
        out.append("fp8")
    return out


def parse_dtypes(text):
    """A comma-separated --dtypes value as a list in ALL_DTYPES order; ValueError when a name is
    unknown or none is given."""
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise ValueError("--dtypes: no dtype given")
    for n in names:
        if n not in ALL_DTYPES:
            raise ValueError("--dtypes: unknown dtype '%s' (one of %s)"
                             % (n, ", ".join(ALL_DTYPES)))
    return [d for d in ALL_DTYPES if d in names]


# ---------------------------------------------------------------------------------------------
# Shape grids (no torch)

def _log_uniform_int(rng, lo, hi):
    """An integer in [lo, hi] whose logarithm is uniform."""
    x = int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))
    return min(hi, max(lo, x))


def _round_to(x, multiple, lo, hi):
    """x rounded to the nearest multiple of `multiple` inside [lo, hi] (lo, hi multiples)."""
    return min(hi, max(lo, int(round(x / multiple)) * multiple))


def _rng(kind, seed, dtype):
    # One stream per (grid, seed, dtype): a dtype's shapes do not change when other dtypes are
    # added or removed. String seeds are hashed with SHA-512 by random.Random, the same on every
    # platform and Python 3 version, independent of PYTHONHASHSEED.
    return random.Random("shardsweep-microbench/%s/%d/%s" % (kind, seed, dtype))


def gemm_grid(dtypes, count=300, seed=0, max_bytes=DEFAULT_MAX_BYTES, align=DEFAULT_GEMM_ALIGN):
    """The covering GEMM grid: for each dtype, `count` shapes (ceil(count/2) bmm, then
    floor(count/2) linear), drawn log-uniformly and deterministically from `seed`.

    bmm: B in [1, 64], M, N, K in [16, 8192]. linear: B = 1, M in [16, 16384], N, K in
    [16, 8192]. M, N and K are rounded to multiples of `align` (1: any integer), of 16 for fp8,
    which also has B = 1. A shape whose A, W and C
    together exceed max_bytes is dropped and drawn again, so each dtype gets exactly `count`
    shapes that fit; ValueError when max_bytes is too small to find them.
    """
    out = []
    for dtype in dtypes:
        if dtype not in ALL_DTYPES:
            raise ValueError("unknown dtype '%s'" % dtype)
        rng = _rng("gemm", seed, dtype)
        n_bmm = (count + 1) // 2
        for op in ["bmm"] * n_bmm + ["linear"] * (count - n_bmm):
            for _ in range(MAX_DRAWS_PER_SHAPE):
                if op == "bmm":
                    B = _log_uniform_int(rng, *GEMM_B_RANGE)
                    M = _log_uniform_int(rng, *GEMM_DIM_RANGE)
                else:
                    B = 1
                    M = _log_uniform_int(rng, *LINEAR_M_RANGE)
                N = _log_uniform_int(rng, *GEMM_DIM_RANGE)
                K = _log_uniform_int(rng, *GEMM_DIM_RANGE)
                multiple = max(align, FP8_MULTIPLE) if dtype == "fp8" else align
                if dtype == "fp8":
                    B = 1
                if multiple > 1:
                    hi = LINEAR_M_RANGE[1] if op == "linear" else GEMM_DIM_RANGE[1]
                    M = _round_to(M, multiple, multiple, hi)
                    N = _round_to(N, multiple, multiple, GEMM_DIM_RANGE[1])
                    K = _round_to(K, multiple, multiple, GEMM_DIM_RANGE[1])
                s = GemmShape(B, M, N, K, dtype, op)
                if gemm_bytes(s) <= max_bytes:
                    out.append(s)
                    break
            else:
                raise ValueError("--max-bytes %d: found no %s %s shape that fits after %d draws"
                                 % (max_bytes, dtype, op, MAX_DRAWS_PER_SHAPE))
    return out


def op_grid(dtypes, count=60, seed=0, max_bytes=DEFAULT_MAX_BYTES, ops=OPS):
    """The operator grid: for each dtype of `dtypes` that operators run in (fp32, fp16, bf16;
    others are ignored) and each op, `count` shapes with B log-uniform in [1, 65536] and H in
    [32, 65536]; a shape whose inputs and output exceed max_bytes is drawn again."""
    out = []
    for dtype in dtypes:
        if dtype not in ALL_DTYPES:
            raise ValueError("unknown dtype '%s'" % dtype)
        if dtype not in OP_DTYPES:
            continue
        rng = _rng("ops", seed, dtype)
        for op in ops:
            if op not in OPS:
                raise ValueError("unknown operator '%s'" % op)
            for _ in range(count):
                for _ in range(MAX_DRAWS_PER_SHAPE):
                    s = OpShape(op, _log_uniform_int(rng, *OP_B_RANGE),
                                _log_uniform_int(rng, *OP_H_RANGE), dtype)
                    if op_bytes(s) <= max_bytes:
                        out.append(s)
                        break
                else:
                    raise ValueError("--max-bytes %d: found no %s %s shape that fits after %d "
                                     "draws" % (max_bytes, dtype, op, MAX_DRAWS_PER_SHAPE))
    return out


# ---------------------------------------------------------------------------------------------
# Files (no torch)

def read_shapes(path):
    """The GEMM shapes of a CSV file with the columns B,M,N,K and optionally dtype and op (any
    order, a header line first). An empty or missing dtype is None: the shape runs in every
    dtype of the run (expand_shapes). An empty or missing op is bmm; 'mm' is read as bmm (as
    `shardsweep predict gemm` does). Blank lines and lines starting with '#' are skipped.
    ValueError names the file and line of a bad row."""
    shapes = []
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = None
        for row in reader:
            line = reader.line_num
            if not row or all(not c.strip() for c in row) or row[0].lstrip().startswith("#"):
                continue
            cells = [c.strip() for c in row]
            if header is None:
                header = cells
                missing = [c for c in ("B", "M", "N", "K") if c not in header]
                if missing:
                    raise ValueError("%s:%d: header lacks column(s) %s (needs B,M,N,K[,dtype][,op])"
                                     % (path, line, ",".join(missing)))
                unknown = [c for c in header if c not in ("B", "M", "N", "K", "dtype", "op")]
                if unknown:
                    raise ValueError("%s:%d: unknown column(s) %s (B,M,N,K[,dtype][,op])"
                                     % (path, line, ",".join(unknown)))
                if len(set(header)) != len(header):
                    raise ValueError("%s:%d: a column appears twice" % (path, line))
                continue
            if len(cells) != len(header):
                raise ValueError("%s:%d: %d fields, the header has %d"
                                 % (path, line, len(cells), len(header)))
            rec = dict(zip(header, cells))
            dims = []
            for c in ("B", "M", "N", "K"):
                try:
                    v = int(rec[c])
                except ValueError:
                    v = 0
                if v <= 0:
                    raise ValueError("%s:%d: %s must be a positive integer, not '%s'"
                                     % (path, line, c, rec[c]))
                dims.append(v)
            dtype = rec.get("dtype", "") or None
            if dtype is not None and dtype not in ALL_DTYPES:
                raise ValueError("%s:%d: dtype must be one of %s, not '%s'"
                                 % (path, line, ", ".join(ALL_DTYPES), dtype))
            op = rec.get("op", "") or "bmm"
            if op == "mm":
                op = "bmm"
            if op not in GEMM_OPS:
                raise ValueError("%s:%d: op must be bmm, mm or linear, not '%s'"
                                 % (path, line, op))
            shapes.append(GemmShape(dims[0], dims[1], dims[2], dims[3], dtype, op))
    if header is None:
        raise ValueError("%s: empty file (needs a header B,M,N,K[,dtype][,op])" % path)
    return shapes


def expand_shapes(shapes, dtypes):
    """Shapes of read_shapes made concrete for a run in `dtypes`: a shape without dtype once per
    dtype, one with a dtype only when that dtype runs. fp8 shapes torch._scaled_mm cannot run
    (B > 1, dimensions not multiples of 16) are left out. Returns (kept, dropped) where dropped
    lists (shape, reason)."""
    kept, dropped = [], []
    for s in shapes:
        for d in ([s.dtype] if s.dtype is not None else dtypes):
            c = s._replace(dtype=d)
            if d not in dtypes:
                dropped.append((c, "dtype %s is not run" % d))
            elif d == "fp8" and not fp8_shape_ok(c):
                dropped.append((c, "fp8 needs B = 1 and M, N, K multiples of 16"))
            else:
                kept.append(c)
    return kept, dropped


def _cell(v):
    # repr() of a float is its shortest round-trip form (also what str() gives in Python 3;
    # repr says so explicitly).
    return repr(v) if isinstance(v, float) else str(v)


def write_csv_atomic(path, header, rows):
    """Writes a CSV file (a header, then the rows; floats as repr()) to PATH.tmp, syncs it and
    renames it to PATH, so PATH is either the old file or the whole new one."""
    tmp = path + ".tmp"
    try:
        with open(tmp, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(header)
            for r in rows:
                w.writerow([_cell(v) for v in r])
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# ---------------------------------------------------------------------------------------------
# Progress (no torch)

def format_clock(seconds):
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    return "%d:%02d:%02d" % (h, rest // 60, rest % 60) if h else "%d:%02d" % (rest // 60, rest % 60)


class Progress:
    """A progress bar on a stream (stderr): done/total, rows/s and ETA, redrawn in place at
    most `interval` seconds apart on a terminal (4 times a second). On a file or pipe (a Slurm
    log) it prints a full line at most every `log_interval` seconds instead of filling the log
    with carriage returns."""

    def __init__(self, label, total, stream=None, interval=0.25, log_interval=30.0,
                 clock=time.monotonic):
        self.label, self.total, self.done = label, total, 0
        self.stream = stream if stream is not None else sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.interval = interval if self.tty else log_interval
        self.clock = clock
        self.start = clock()
        self.last = None  # clock() of the last drawing
        self.drawn = -1  # `done` at the last drawing

    def line(self):
        elapsed = max(self.clock() - self.start, 1e-9)
        rate = self.done / elapsed
        eta = (self.total - self.done) / rate if rate > 0 else float("nan")
        width = 24
        fill = int(width * self.done / self.total) if self.total else width
        return "%-5s [%s%s] %d/%d  %.1f rows/s  ETA %s" % (
            self.label, "#" * fill, "-" * (width - fill), self.done, self.total, rate,
            format_clock(eta) if eta == eta else "?")

    def update(self, n=1):
        self.done += n
        now = self.clock()
        if self.last is None or now - self.last >= self.interval or self.done >= self.total:
            self.last = now
            self._draw()

    def _draw(self):
        self.drawn = self.done
        if self.tty:
            self.stream.write("\r" + self.line() + "\033[K")
        else:
            self.stream.write(self.line() + "\n")
        self.stream.flush()

    def close(self):
        """Draws the final state and ends the line; returns the seconds taken."""
        if self.drawn != self.done or self.last is None:
            self._draw()
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
        return self.clock() - self.start
