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

What it times, on one CUDA GPU (--device), after --gpu-warmup-s seconds of large matrix products
(the clocks of a busy GPU): per shape --warmup calls, then --repeats groups of calls back to back
timed with CUDA events, each group --iters calls or as many as last --min-group-ms; latency_ms is
the median group's time per call (so a small kernel's host launch cost is part of its time, as it
is in a training step):

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

The grid, CSV and progress code (grids.py) and the argument code need only the Python standard
library (`--dry-run` runs without torch; scripts/microbench/test_microbench.py tests it); torch
is imported by the functions that time something.
"""
import argparse
import math
import os
import shlex
import statistics
import sys
import time

from grids import (ALL_DTYPES, DEFAULT_GEMM_ALIGN, DEFAULT_MAX_BYTES, GEMM_HEADER, OP_INPUTS, OPS_HEADER,
                   GemmShape, Progress, expand_shapes, format_clock, gemm_grid, op_grid,
                   parse_dtypes, read_shapes, supported_dtypes, write_csv_atomic)

# ---------------------------------------------------------------------------------------------
# Timing (torch, imported here only)

def _torch_dtype(torch, dtype):
    return {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16,
            "bf16": torch.bfloat16, "fp8": getattr(torch, "float8_e4m3fn", None)}[dtype]


def _time_calls(torch, fn, iters, warmup, repeats=1, min_group_ms=0.0):
    """Milliseconds per call of fn: after `warmup` calls and a synchronize (so nothing earlier is
    inside a window), `repeats` groups of calls back to back, each timed with CUDA events on the
    current stream; the median of the groups' time per call. A group has `iters` calls, or more
    when `iters` calls last less than `min_group_ms` (scaled from the first group, which then
    counts only as a probe): a short group measures a clock transition or one late launch as
    much as the kernel, and the median drops the group that caught one."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)

    def group(calls):
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / calls

    calls = iters
    per_call = [group(calls)]
    if per_call[0] * calls < min_group_ms:
        calls = max(iters, int(math.ceil(min_group_ms / max(per_call[0], 1e-6))))
        per_call = []
    while len(per_call) < repeats:
        per_call.append(group(calls))
    return statistics.median(per_call)


def warm_up_gpu(torch, device, seconds):
    """Runs 4096^3 bf16 (fp32 before compute capability 8.0) matrix products for `seconds`, so
    that the first shapes are timed at the clocks a busy GPU runs at, not while it leaves idle."""
    if seconds <= 0:
        return
    dt = torch.bfloat16 if torch.cuda.get_device_capability(device)[0] >= 8 else torch.float32
    a = torch.randn(4096, 4096, device=device, dtype=dt)
    t0 = time.monotonic()
    with torch.no_grad():
        while time.monotonic() - t0 < seconds:
            for _ in range(10):
                a @ a
            torch.cuda.synchronize()


def time_gemm(shape, device, iters=20, warmup=5, repeats=1, min_group_ms=0.0):
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
            return _time_calls(torch, fn, iters, warmup, repeats, min_group_ms)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = prev_tf32


def time_op(shape, device, iters=20, warmup=5, repeats=1, min_group_ms=0.0):
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
        return _time_calls(torch, fns[s.op], iters, warmup, repeats, min_group_ms)


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
    p.add_argument("--align", type=int, default=DEFAULT_GEMM_ALIGN, metavar="N",
                   help="grid GEMM dimensions M, N, K are multiples of N (default %d, as "
                        "training shapes; 1: any integer, which cuBLAS runs on slower kernels "
                        "when not a multiple of 8); fp8 uses multiples of 16" % DEFAULT_GEMM_ALIGN)
    p.add_argument("--repeats", type=int, default=5,
                   help="timed groups of calls per shape; latency_ms is the median of the groups' "
                        "time per call (default 5)")
    p.add_argument("--min-group-ms", type=float, default=1.0, metavar="MS",
                   help="a group has --iters calls, or as many more as last at least MS "
                        "milliseconds (default 1.0)")
    p.add_argument("--gpu-warmup-s", type=float, default=2.0, metavar="S",
                   help="seconds of large matrix products before the first shape, so that every "
                        "shape is timed at a busy GPU's clocks (default 2.0)")
    p.add_argument("--warmup", type=int, default=5,
                   help="untimed calls per shape before the timed ones (default 5)")
    p.add_argument("--skip-gemm", action="store_true", help="time no GEMMs, write no GEMM CSV")
    p.add_argument("--skip-ops", action="store_true",
                   help="time no operators, write no operator CSV")
    p.add_argument("--dry-run", action="store_true",
                   help="print how many shapes would run and the first ones, then exit (needs no "
                        "torch or GPU; without --dtypes it plans every dtype)")
    args = p.parse_args(argv)
    for name in ("gemm_count", "op_count", "iters", "max_bytes", "repeats", "align"):
        if getattr(args, name) <= 0:
            p.error("--%s must be > 0" % name.replace("_", "-"))
    if args.warmup < 0:
        p.error("--warmup must be >= 0")
    if args.min_group_ms < 0 or args.gpu_warmup_s < 0:
        p.error("--min-group-ms and --gpu-warmup-s must be >= 0")
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
        gemms += gemm_grid(dtypes, args.gemm_count, args.seed, args.max_bytes, args.align)
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
            ms = timer(s, device, args.iters, args.warmup, args.repeats, args.min_group_ms)
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

    warm_up_gpu(torch, device, args.gpu_warmup_s)
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

    print("GPU %s: done in %s; wrote %s" % (name, format_clock(time.monotonic() - t0),
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
