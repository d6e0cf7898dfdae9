#!/usr/bin/env python3
"""GPU microbenchmark that calibrates shardsweep's GEMM and operator models to your GPU.

shardsweep prices a training step from analytic models of its kernels: a tile/wave model for
GEMMs (docs/model/gemm.md) and a roofline model for softmax, layer norm and element-wise
operators (docs/model/learned_operators.md). Their constants come from spec sheets and public
measurements of a few GPUs; what cuBLAS picks on *your* GPU, driver and clocks is only known by
measuring it. This script measures it, and `shardsweep calibrate gpu` fits the models to the
result (README.md, "Calibrating to your cluster"):

    python3 scripts/microbench/microbench.py                 # -> gemm.csv, ops.csv
    shardsweep calibrate gpu --gpu "NVIDIA A100-SXM4-80GB" --gemm gemm.csv --ops ops.csv \\
        -o calibration.yaml

What it times, on one CUDA GPU (--device), with CUDA events around --iters calls after --warmup
calls (latency_ms = elapsed / iters, so a small kernel's host launch cost is part of its time,
as it is in a training step):

* GEMMs C[B,M,N] = A[B,M,K] @ W[B,K,N] (K is the reduction), op `bmm` (torch.bmm, torch.mm when
  B = 1) or `linear` (torch.nn.functional.linear(x[B,M,K], W[N,K], bias[N])), in fp32, tf32
  (fp32 tensors with torch.backends.cuda.matmul.allow_tf32 on for those rows only), fp16, bf16
  and fp8 (torch._scaled_mm on float8_e4m3fn inputs with unit scales and a bf16 result; B = 1 and
  M, N, K multiples of 16). The shapes are a fixed, seeded covering grid (log-uniform B in
  [1, 64], M, N, K in [16, 8192]; linear rows have B = 1 and M up to 16384), preceded by the
  shapes of your own workloads when you give them (--shapes).
* Operators on a [B,H] tensor: softmax (over H), ln (layer norm over H with weight and bias), add,
  mul, div, pow (two tensors), addu, mulu, divu (tensor and the scalar 1.5), powu (x ** 2.0),
  gelu, relu, tanh; log-uniform B in [1, 65536], H in [32, 65536]; in the floating dtypes of
  --dtypes among fp32, fp16, bf16 (tf32 and fp8 are GEMM-only).

Output: two CSV files, each written atomically (NAME.tmp, then renamed), so a killed run leaves
no half-written file:

    gemm.csv   B,M,N,K,dtype,op,latency_ms
    ops.csv    op,B,H,dtype,latency_ms

A shape that does not fit in the GPU's memory is skipped (counted, reported at the end).

The grid, CSV and argument code needs only the Python standard library (`--dry-run` runs
without torch; scripts/microbench/test_microbench.py tests it); torch is imported by the
functions that time something.
"""
import argparse
import csv
import math
import os
import random
import shlex
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


def gemm_grid(dtypes, count=300, seed=0, max_bytes=DEFAULT_MAX_BYTES):
    """The covering GEMM grid: for each dtype, `count` shapes (ceil(count/2) bmm, then
    floor(count/2) linear), drawn log-uniformly and deterministically from `seed`.

    bmm: B in [1, 64], M, N, K in [16, 8192]. linear: B = 1, M in [16, 16384], N, K in
    [16, 8192]. fp8: B = 1 and M, N, K rounded to multiples of 16. A shape whose A, W and C
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
                if dtype == "fp8":
                    B = 1
                    hi = LINEAR_M_RANGE[1] if op == "linear" else GEMM_DIM_RANGE[1]
                    M = _round_to(M, FP8_MULTIPLE, FP8_MULTIPLE, hi)
                    N = _round_to(N, FP8_MULTIPLE, FP8_MULTIPLE, GEMM_DIM_RANGE[1])
                    K = _round_to(K, FP8_MULTIPLE, FP8_MULTIPLE, GEMM_DIM_RANGE[1])
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

def _clock(seconds):
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
            _clock(eta) if eta == eta else "?")

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


# ---------------------------------------------------------------------------------------------
# Timing (torch, imported here only)

def _torch_dtype(torch, dtype):
    return {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16,
            "bf16": torch.bfloat16, "fp8": getattr(torch, "float8_e4m3fn", None)}[dtype]


def _time_calls(torch, fn, iters, warmup):
    """Milliseconds per call of fn: CUDA events on the current stream around `iters` calls, after
    `warmup` calls and a synchronize (so nothing earlier is inside the window)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / iters


def time_gemm(shape, device, iters=20, warmup=5):
    """Latency in ms of one GEMM shape (GemmShape) on `device`. Allocates its inputs once.
    TF32 is allowed only while a tf32 shape runs (the previous setting is restored). Raises torch's
    out-of-memory error when the operands do not fit."""
    import torch
    import torch.nn.functional as F

    s = shape
    dt = _torch_dtype(torch, s.dtype)
    prev_tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = s.dtype == "tf32"
    try:
        with torch.no_grad():
            if s.dtype == "fp8":
                # cuBLASLt FP8 GEMMs take row-major A and column-major B: B = W[N,K] transposed,
                # for both ops; linear adds a bf16 bias. Unit per-tensor scales (fp32 scalars).
                a = torch.randn(s.M, s.K, device=device).to(dt)
                w = torch.randn(s.N, s.K, device=device).to(dt)
                b = w.t()
                one = torch.ones((), device=device, dtype=torch.float32)
                bias = (torch.randn(s.N, device=device, dtype=torch.bfloat16)
                        if s.op == "linear" else None)

                def fn():
                    return torch._scaled_mm(a, b, scale_a=one, scale_b=one, bias=bias,
                                            out_dtype=torch.bfloat16)
            elif s.op == "linear":
                x = torch.randn(s.B, s.M, s.K, device=device, dtype=dt)
                w = torch.randn(s.N, s.K, device=device, dtype=dt)
                bias = torch.randn(s.N, device=device, dtype=dt)
                if s.B == 1:
                    x = x[0]  # [M,K]: the addmm a 2-D activation takes

                def fn():
                    return F.linear(x, w, bias)
            elif s.B == 1:
                a = torch.randn(s.M, s.K, device=device, dtype=dt)
                w = torch.randn(s.K, s.N, device=device, dtype=dt)

                def fn():
                    return torch.mm(a, w)
            else:
                a = torch.randn(s.B, s.M, s.K, device=device, dtype=dt)
                w = torch.randn(s.B, s.K, s.N, device=device, dtype=dt)

                def fn():
                    return torch.bmm(a, w)
            return _time_calls(torch, fn, iters, warmup)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = prev_tf32


def time_op(shape, device, iters=20, warmup=5):
    """Latency in ms of one operator shape (OpShape) on a [B,H] tensor on `device`. Allocates its
    inputs once. Raises torch's out-of-memory error when they do not fit."""
    import torch
    import torch.nn.functional as F

    s = shape
    dt = _torch_dtype(torch, s.dtype)
    with torch.no_grad():
        # Inputs in [0.5, 1.5): positive, so div and pow compute ordinary numbers.
        x = torch.rand(s.B, s.H, device=device, dtype=dt) + 0.5
        y = torch.rand(s.B, s.H, device=device, dtype=dt) + 0.5 if s.op in OP_INPUTS else None
        if s.op == "ln":
            weight = torch.ones(s.H, device=device, dtype=dt)
            bias = torch.zeros(s.H, device=device, dtype=dt)
        fns = {
            "softmax": lambda: torch.softmax(x, dim=-1),
            "ln": lambda: F.layer_norm(x, (s.H,), weight, bias),
            "add": lambda: x + y,
            "mul": lambda: x * y,
            "div": lambda: x / y,
            "pow": lambda: torch.pow(x, y),
            "addu": lambda: x + 1.5,
            "mulu": lambda: x * 1.5,
            "divu": lambda: x / 1.5,
            "powu": lambda: x ** 2.0,
            "gelu": lambda: F.gelu(x),
            "relu": lambda: torch.relu(x),
            "tanh": lambda: torch.tanh(x),
        }
        return _time_calls(torch, fns[s.op], iters, warmup)


def _oom_error(torch):
    """torch's out-of-memory exception (torch.cuda.OutOfMemoryError, torch >= 1.13)."""
    return getattr(torch.cuda, "OutOfMemoryError", None)


def _is_oom(torch, e):
    oom = _oom_error(torch)
    if oom is not None and isinstance(e, oom):
        return True
    return isinstance(e, RuntimeError) and "out of memory" in str(e)


def fp8_status(torch, device):
    """(ok, why not): whether fp8 GEMMs run here (torch._scaled_mm, compute capability >= 8.9,
    and a 16x16x16 trial call that works)."""
    if not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
        return False, "this torch (%s) has no torch._scaled_mm / float8_e4m3fn" % torch.__version__
    cc = torch.cuda.get_device_capability(device)
    if tuple(cc) < (8, 9):
        return False, "compute capability %d.%d < 8.9 (FP8 tensor cores: Ada, Hopper)" % tuple(cc)
    try:
        time_gemm(GemmShape(1, 16, 16, 16, "fp8", "bmm"), device, iters=1, warmup=1)
        time_gemm(GemmShape(1, 16, 16, 16, "fp8", "linear"), device, iters=1, warmup=1)
    except (RuntimeError, TypeError) as e:  # TypeError: a _scaled_mm of another signature
        return False, "torch._scaled_mm failed a 16x16x16 trial: %s" % str(e).splitlines()[0]
    return True, ""


# ---------------------------------------------------------------------------------------------
# Driver

def parse_args(argv=None):
    p = argparse.ArgumentParser(
        prog="microbench.py",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Times GEMMs and non-GEMM operators on one CUDA GPU and writes the two CSV "
                    "files that\n`shardsweep calibrate gpu` fits shardsweep's models to "
                    "(README.md, \"Calibrating to your\ncluster\"; scripts/microbench/README.md).",
        epilog="output:\n"
               "  GEMM CSV       B,M,N,K,dtype,op,latency_ms   C[B,M,N] = A[B,M,K] @ W[B,K,N]\n"
               "  operator CSV   op,B,H,dtype,latency_ms       on a [B,H] tensor\n"
               "Each is written atomically (NAME.tmp, then renamed). Then:\n"
               "  shardsweep calibrate gpu --gpu \"<device name>\" --gemm gemm.csv --ops ops.csv "
               "-o calibration.yaml")
    p.add_argument("--device", default="cuda:0",
                   help="the CUDA device to time (default cuda:0; one GPU: pick it with this or "
                        "CUDA_VISIBLE_DEVICES)")
    p.add_argument("--dtypes", default=None,
                   help="comma-separated dtypes among %s (default: every one this GPU supports: "
                        "fp32 and fp16 always, tf32 and bf16 from compute capability 8.0, fp8 "
                        "from 8.9 when torch has torch._scaled_mm). Operators run in those of "
                        "fp32, fp16, bf16" % ",".join(ALL_DTYPES))
    p.add_argument("--gemm-out", default="gemm.csv", metavar="FILE",
                   help="GEMM CSV to write (default gemm.csv)")
    p.add_argument("--ops-out", default="ops.csv", metavar="FILE",
                   help="operator CSV to write (default ops.csv)")
    p.add_argument("--shapes", default=None, metavar="FILE.csv",
                   help="your workloads' GEMM shapes, timed before the grid: a CSV with the "
                        "columns B,M,N,K and optionally dtype (empty: every dtype run) and op "
                        "(bmm default, mm, linear). Not filtered by --max-bytes")
    p.add_argument("--gemm-count", type=int, default=300, metavar="N",
                   help="grid GEMM shapes per dtype, half bmm and half linear (default 300)")
    p.add_argument("--op-count", type=int, default=60, metavar="N",
                   help="grid shapes per operator per dtype (default 60)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the shape grids (default 0; the same seed gives the same shapes)")
    p.add_argument("--max-bytes", type=int, default=DEFAULT_MAX_BYTES, metavar="BYTES",
                   help="largest grid shape: a GEMM's A, W and C, or an operator's inputs and "
                        "output, together (default %d = 2 GiB); larger ones are drawn again"
                        % DEFAULT_MAX_BYTES)
    p.add_argument("--iters", type=int, default=20,
                   help="timed calls per shape; latency_ms = CUDA-event time / iters (default 20)")
    p.add_argument("--warmup", type=int, default=5,
                   help="untimed calls per shape before the timed ones (default 5)")
    p.add_argument("--skip-gemm", action="store_true", help="time no GEMMs, write no GEMM CSV")
    p.add_argument("--skip-ops", action="store_true",
                   help="time no operators, write no operator CSV")
    p.add_argument("--dry-run", action="store_true",
                   help="print how many shapes would run and the first ones, then exit (needs no "
                        "torch or GPU; without --dtypes it plans every dtype)")
    args = p.parse_args(argv)
    for name in ("gemm_count", "op_count", "iters", "max_bytes"):
        if getattr(args, name) <= 0:
            p.error("--%s must be > 0" % name.replace("_", "-"))
    if args.warmup < 0:
        p.error("--warmup must be >= 0")
    if args.skip_gemm and args.skip_ops:
        p.error("--skip-gemm and --skip-ops: nothing to do")
    if args.dtypes is not None:
        try:
            args.dtype_list = parse_dtypes(args.dtypes)
        except ValueError as e:
            p.error(str(e))
    else:
        args.dtype_list = None
    return args


def plan(args, dtypes, log=print):
    """The GEMM and operator shapes of a run in `dtypes`: (gemm shapes, op shapes)."""
    gemms = []
    if not args.skip_gemm:
        if args.shapes:
            user, dropped = expand_shapes(read_shapes(args.shapes), dtypes)
            for s, why in dropped[:5]:
                log("  --shapes: skipping %s: %s" % (_fmt_gemm(s), why))
            if len(dropped) > 5:
                log("  --shapes: ... %d more skipped" % (len(dropped) - 5))
            gemms += user
        gemms += gemm_grid(dtypes, args.gemm_count, args.seed, args.max_bytes)
    ops = [] if args.skip_ops else op_grid(dtypes, args.op_count, args.seed, args.max_bytes)
    return gemms, ops


def _fmt_gemm(s):
    return "B=%d M=%d N=%d K=%d %s %s" % (s.B, s.M, s.N, s.K, s.dtype, s.op)


def _fmt_op(s):
    return "%s B=%d H=%d %s" % (s.op, s.B, s.H, s.dtype)


def dry_run(args):
    dtypes = args.dtype_list or list(ALL_DTYPES)
    print("dry run: dtypes %s%s" % (",".join(dtypes), "" if args.dtype_list else
                                    " (a real run keeps those the GPU supports)"))
    gemms, ops = plan(args, dtypes)
    for label, rows, fmt in (("GEMM", gemms, _fmt_gemm), ("operator", ops, _fmt_op)):
        if (label == "GEMM" and args.skip_gemm) or (label == "operator" and args.skip_ops):
            continue
        print("%d %s shapes, %d timed calls each (+%d warm-up); first ones:"
              % (len(rows), label, args.iters, args.warmup))
        for s in rows[:10]:
            print("  " + fmt(s))
    return 0


def _run_rows(label, shapes, timer, device, args, torch):
    """Times every shape with timer; returns (rows, oom count, error count). A shape that runs
    out of memory or fails is skipped; 20 failures in a row (a broken CUDA context) stop the
    run."""
    rows, oom, errors, in_a_row = [], 0, 0, 0
    bar = Progress(label, len(shapes))
    for s in shapes:
        out_of_memory = False
        try:
            ms = timer(s, device, args.iters, args.warmup)
            rows.append(tuple(s) + (float(ms),))
            in_a_row = 0
        except RuntimeError as e:  # torch.cuda.OutOfMemoryError is a RuntimeError
            if _is_oom(torch, e):
                oom += 1
                out_of_memory = True
            else:
                errors += 1
                in_a_row += 1
                if errors <= 5:
                    what = _fmt_gemm(s) if label == "gemm" else _fmt_op(s)
                    first = str(e).splitlines()[0] if str(e) else type(e).__name__
                    sys.stderr.write("%s%s: %s failed: %s\n"
                                     % ("\n" if bar.tty else "", label, what, first))
                if in_a_row >= 20:
                    bar.close()
                    raise SystemExit("%s: 20 shapes in a row failed; stopping (nothing written "
                                     "for this part)" % label)
        if out_of_memory:
            # Outside the except block: the traceback, which holds the shape's tensors, is gone,
            # so the cache can give their memory back before the next shape.
            torch.cuda.empty_cache()
        bar.update()
    bar.close()
    return rows, oom, errors


def main(argv=None):
    args = parse_args(argv)
    if args.dry_run:
        try:
            return dry_run(args)
        except (OSError, ValueError) as e:
            print("error: %s" % e, file=sys.stderr)
            return 2
    t0 = time.monotonic()
    for out, skip in ((args.gemm_out, args.skip_gemm), (args.ops_out, args.skip_ops)):
        if not skip and os.path.dirname(out):
            os.makedirs(os.path.dirname(out), exist_ok=True)
    try:
        import torch
    except ImportError:
        print("error: this python3 (%s) has no torch; install PyTorch with CUDA or use --dry-run"
              % sys.executable, file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("error: torch %s sees no CUDA GPU" % torch.__version__, file=sys.stderr)
        return 2
    device = torch.device(args.device)
    torch.cuda.set_device(device)
    name = torch.cuda.get_device_name(device)
    cc = torch.cuda.get_device_capability(device)
    print("GPU %s (%s, compute capability %d.%d), torch %s, CUDA %s"
          % (name, device, cc[0], cc[1], torch.__version__, torch.version.cuda))

    fp8_ok, fp8_why = fp8_status(torch, device)
    supported = supported_dtypes(cc, fp8_ok)
    wanted = args.dtype_list or supported
    dtypes = [d for d in wanted if d in supported]
    for d in wanted:
        if d not in supported:
            why = fp8_why if d == "fp8" else "compute capability %d.%d < 8.0" % tuple(cc)
            print("skipping %s: %s" % (d, why))
    if not args.dtype_list and not fp8_ok:
        print("no fp8: %s" % fp8_why)
    if not dtypes:
        print("error: none of the dtypes %s runs on this GPU" % ",".join(wanted), file=sys.stderr)
        return 2
    try:
        gemms, ops = plan(args, dtypes)
    except (OSError, ValueError) as e:
        print("error: %s" % e, file=sys.stderr)
        return 2
    print("dtypes %s: %d GEMM shapes, %d operator shapes, %d timed calls each"
          % (",".join(dtypes), len(gemms), len(ops), args.iters))

    written, skipped = [], []
    if not args.skip_gemm:
        rows, oom, err = _run_rows("gemm", gemms, time_gemm, device, args, torch)
        write_csv_atomic(args.gemm_out, GEMM_HEADER, rows)
        written.append("%s (%d rows)" % (args.gemm_out, len(rows)))
        skipped.append((oom, err, "GEMM"))
    if not args.skip_ops:
        rows, oom, err = _run_rows("ops", ops, time_op, device, args, torch)
        write_csv_atomic(args.ops_out, OPS_HEADER, rows)
        written.append("%s (%d rows)" % (args.ops_out, len(rows)))
        skipped.append((oom, err, "operator"))

    print("GPU %s: done in %s; wrote %s" % (name, _clock(time.monotonic() - t0),
                                            ", ".join(written)))
    for oom, err, what in skipped:
        if oom:
            print("  %d %s shapes skipped: out of GPU memory" % (oom, what))
        if err:
            print("  %d %s shapes skipped: failed (first messages above)" % (err, what))
    hint = ["shardsweep", "calibrate", "gpu", "--gpu", '"%s"' % name.replace('"', '\\"')]
    if not args.skip_gemm:
        hint += ["--gemm", shlex.quote(args.gemm_out)]
    if not args.skip_ops:
        hint += ["--ops", shlex.quote(args.ops_out)]
    print("next:\n  " + " ".join(hint + ["-o", "calibration.yaml"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
