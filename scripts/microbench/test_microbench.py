#!/usr/bin/python3
"""Tests of the microbenchmark's parts that need no torch or GPU (grids.py, microbench.py --dry-run): the shape grids, reading a shapes
file, writing a CSV atomically, the dtype choice and the progress bar.

    /usr/bin/python3 -m unittest scripts/microbench/test_microbench.py -v     (from the repo root)
"""
import io
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import grids as mb  # noqa: E402  (after the path)
import microbench  # noqa: E402


class GemmGridTest(unittest.TestCase):
    def test_same_seed_same_shapes(self):
        self.assertEqual(mb.gemm_grid(["fp32", "bf16"], 40, seed=0),
                         mb.gemm_grid(["fp32", "bf16"], 40, seed=0))

    def test_other_seed_other_shapes(self):
        a = mb.gemm_grid(["fp32"], 40, seed=0)
        b = mb.gemm_grid(["fp32"], 40, seed=1)
        self.assertEqual(len(a), len(b))
        self.assertNotEqual(a, b)

    def test_dtype_stream_independent_of_others(self):
        # A dtype's shapes do not depend on which other dtypes run.
        alone = mb.gemm_grid(["fp16"], 20, seed=3)
        mixed = [s for s in mb.gemm_grid(["fp32", "fp16"], 20, seed=3) if s.dtype == "fp16"]
        self.assertEqual(alone, mixed)

    def test_counts_and_ops(self):
        g = mb.gemm_grid(list(mb.ALL_DTYPES), 31, seed=0)
        for d in mb.ALL_DTYPES:
            rows = [s for s in g if s.dtype == d]
            self.assertEqual(len(rows), 31)
            self.assertEqual(sum(s.op == "bmm" for s in rows), 16)
            self.assertEqual(sum(s.op == "linear" for s in rows), 15)

    def test_ranges(self):
        g = mb.gemm_grid(list(mb.ALL_DTYPES), 300, seed=0)
        for s in g:
            self.assertIn(s.op, mb.GEMM_OPS)
            self.assertTrue(1 <= s.B <= 64, s)
            self.assertTrue(16 <= s.N <= 8192 and 16 <= s.K <= 8192, s)
            if s.op == "linear":
                self.assertEqual(s.B, 1, s)
                self.assertTrue(16 <= s.M <= 16384, s)
            else:
                self.assertTrue(16 <= s.M <= 8192, s)
            if s.dtype == "fp8":
                self.assertTrue(mb.fp8_shape_ok(s), s)
            self.assertLessEqual(mb.gemm_bytes(s), mb.DEFAULT_MAX_BYTES, s)
        bmm = [s for s in g if s.op == "bmm" and s.dtype != "fp8"]
        # The grid covers its ranges (log-uniform: both ends are reached in 1200 draws).
        self.assertGreater(max(s.B for s in bmm), 32)
        self.assertIn(1, {s.B for s in bmm})
        self.assertLess(min(s.M for s in g), 32)
        self.assertGreater(max(s.M for s in g if s.op == "linear"), 8192)
        self.assertGreater(max(s.K for s in g), 4096)

    def test_alignment(self):
        # Default: every dimension a multiple of 8 (16 for fp8); --align 1 keeps the raw draws,
        # most of which are not multiples of 8, and the same draws round to the aligned grid.
        aligned = mb.gemm_grid(["bf16", "fp8"], 100, seed=3)
        for s in aligned:
            m = 16 if s.dtype == "fp8" else 8
            self.assertEqual((s.M % m, s.N % m, s.K % m), (0, 0, 0), s)
        raw = mb.gemm_grid(["bf16"], 100, seed=3, align=1)
        self.assertGreater(sum(s.K % 8 != 0 for s in raw), 50)
        for r, a in zip(raw, aligned):
            self.assertEqual((a.B, a.op), (r.B, r.op))
            self.assertLessEqual(abs(a.K - r.K), 4)

    def test_max_bytes_filter(self):
        limit = 4 << 20  # 4 MiB
        g = mb.gemm_grid(["fp32", "fp8"], 100, seed=0, max_bytes=limit)
        self.assertEqual(len(g), 200)  # dropped shapes are drawn again
        self.assertTrue(all(mb.gemm_bytes(s) <= limit for s in g))
        # Without the limit some of these draws are larger.
        self.assertTrue(any(mb.gemm_bytes(s) > limit for s in mb.gemm_grid(["fp32"], 100)))

    def test_max_bytes_too_small(self):
        with self.assertRaises(ValueError):
            mb.gemm_grid(["fp32"], 1, max_bytes=100)

    def test_gemm_bytes(self):
        self.assertEqual(mb.gemm_bytes(mb.GemmShape(2, 3, 5, 7, "fp32", "bmm")),
                         4 * (2 * 3 * 7 + 2 * 7 * 5 + 2 * 3 * 5))
        self.assertEqual(mb.gemm_bytes(mb.GemmShape(2, 3, 5, 7, "bf16", "linear")),
                         2 * (2 * 3 * 7 + 7 * 5 + 2 * 3 * 5))
        self.assertEqual(mb.gemm_bytes(mb.GemmShape(1, 16, 32, 48, "fp8", "bmm")),
                         16 * 48 + 48 * 32 + 2 * 16 * 32)


class OpGridTest(unittest.TestCase):
    def test_deterministic_and_ranges(self):
        g = mb.op_grid(["fp32", "tf32", "bf16", "fp8"], 20, seed=0)
        self.assertEqual(g, mb.op_grid(["fp32", "tf32", "bf16", "fp8"], 20, seed=0))
        self.assertNotEqual(g, mb.op_grid(["fp32", "tf32", "bf16", "fp8"], 20, seed=5))
        self.assertEqual({s.dtype for s in g}, {"fp32", "bf16"})  # tf32, fp8: GEMM only
        self.assertEqual(len(g), 2 * len(mb.OPS) * 20)
        for s in g:
            self.assertIn(s.op, mb.OPS)
            self.assertTrue(1 <= s.B <= 65536 and 32 <= s.H <= 65536, s)
            self.assertLessEqual(mb.op_bytes(s), mb.DEFAULT_MAX_BYTES, s)

    def test_max_bytes(self):
        limit = 1 << 20
        g = mb.op_grid(["fp32"], 30, seed=0, max_bytes=limit)
        self.assertEqual(len(g), 30 * len(mb.OPS))
        self.assertTrue(all(mb.op_bytes(s) <= limit for s in g))
        self.assertEqual(mb.op_bytes(mb.OpShape("add", 10, 100, "fp16")), 3 * 10 * 100 * 2)
        self.assertEqual(mb.op_bytes(mb.OpShape("gelu", 10, 100, "fp32")), 2 * 10 * 100 * 4)


class DtypesTest(unittest.TestCase):
    def test_supported(self):
        self.assertEqual(mb.supported_dtypes((7, 0), True), ["fp32", "fp16"])
        self.assertEqual(mb.supported_dtypes((8, 0), True), ["fp32", "tf32", "fp16", "bf16"])
        self.assertEqual(mb.supported_dtypes((8, 9), False), ["fp32", "tf32", "fp16", "bf16"])
        self.assertEqual(mb.supported_dtypes((9, 0), True), list(mb.ALL_DTYPES))

    def test_parse(self):
        self.assertEqual(mb.parse_dtypes("bf16, fp32"), ["fp32", "bf16"])
        with self.assertRaises(ValueError):
            mb.parse_dtypes("fp64")
        with self.assertRaises(ValueError):
            mb.parse_dtypes(" , ")


class ReadShapesTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def write(self, text):
        path = os.path.join(self.dir.name, "shapes.csv")
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_all_columns(self):
        path = self.write("B,M,N,K,dtype,op\n1,2048,4096,1024,bf16,linear\n8,128,128,64,fp32,mm\n")
        self.assertEqual(mb.read_shapes(path), [mb.GemmShape(1, 2048, 4096, 1024, "bf16", "linear"),
                                                mb.GemmShape(8, 128, 128, 64, "fp32", "bmm")])

    def test_optional_columns_missing_or_empty(self):
        path = self.write("K,N,M,B\n64,32,16,2\n\n# a comment\n1,2,3,4\n")
        self.assertEqual(mb.read_shapes(path), [mb.GemmShape(2, 16, 32, 64, None, "bmm"),
                                                mb.GemmShape(4, 3, 2, 1, None, "bmm")])
        path = self.write("B,M,N,K,dtype,op\n1,16,16,16,,\n")
        self.assertEqual(mb.read_shapes(path), [mb.GemmShape(1, 16, 16, 16, None, "bmm")])

    def test_bad_rows_name_the_line(self):
        cases = {
            "B,M,N,K\n1,2,3,4\n1,2,x,4\n": ":3: N must be a positive integer",
            "B,M,N,K\n1,2,3,4\n\n0,2,3,4\n": ":4: B must be a positive integer",
            "B,M,N,K\n1,2,3\n": ":2: 3 fields",
            "B,M,N,K,dtype\n1,2,3,4,fp64\n": ":2: dtype must be one of",
            "B,M,N,K,op\n1,2,3,4,conv\n": ":2: op must be",
            "B,M,N\n1,2,3\n": ":1: header lacks column(s) K",
            "B,M,N,K,flops\n1,2,3,4,5\n": ":1: unknown column(s) flops",
            "": "empty file",
        }
        for text, message in cases.items():
            path = self.write(text)
            with self.assertRaises(ValueError, msg=text) as cm:
                mb.read_shapes(path)
            self.assertIn(path, str(cm.exception))
            self.assertIn(message, str(cm.exception))

    def test_expand(self):
        shapes = [mb.GemmShape(1, 16, 32, 48, None, "bmm"),
                  mb.GemmShape(2, 16, 32, 48, "fp8", "bmm"),
                  mb.GemmShape(1, 10, 32, 48, None, "linear"),
                  mb.GemmShape(1, 16, 16, 16, "tf32", "bmm")]
        kept, dropped = mb.expand_shapes(shapes, ["fp32", "fp8"])
        self.assertEqual(kept, [mb.GemmShape(1, 16, 32, 48, "fp32", "bmm"),
                                mb.GemmShape(1, 16, 32, 48, "fp8", "bmm"),
                                mb.GemmShape(1, 10, 32, 48, "fp32", "linear")])
        self.assertEqual([s for s, _ in dropped],
                         [mb.GemmShape(2, 16, 32, 48, "fp8", "bmm"),
                          mb.GemmShape(1, 10, 32, 48, "fp8", "linear"),
                          mb.GemmShape(1, 16, 16, 16, "tf32", "bmm")])


class WriteCsvTest(unittest.TestCase):
    def test_exact_content_and_no_tmp(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "gemm.csv")
            with open(path, "w") as f:
                f.write("old\n")
            rows = [(1, 16, 32, 64, "fp32", "bmm", 0.1), (2, 8, 8, 8, "bf16", "linear", 1 / 3)]
            mb.write_csv_atomic(path, mb.GEMM_HEADER, rows)
            with open(path, newline="") as f:
                self.assertEqual(f.read(),
                                 "B,M,N,K,dtype,op,latency_ms\n"
                                 "1,16,32,64,fp32,bmm,0.1\n"
                                 "2,8,8,8,bf16,linear,0.3333333333333333\n")
            self.assertEqual(os.listdir(d), ["gemm.csv"])
            self.assertEqual(float("0.3333333333333333"), 1 / 3)  # repr round-trips

    def test_failure_keeps_old_file(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "ops.csv")
            with open(path, "w") as f:
                f.write("old\n")

            def rows():
                yield ("softmax", 1, 32, "fp32", 0.5)
                raise RuntimeError("killed mid-write")

            with self.assertRaises(RuntimeError):
                mb.write_csv_atomic(path, mb.OPS_HEADER, rows())
            with open(path) as f:
                self.assertEqual(f.read(), "old\n")
            self.assertEqual(os.listdir(d), ["ops.csv"])


class ProgressTest(unittest.TestCase):
    def test_rate_limited_log_lines(self):
        now = [0.0]
        out = io.StringIO()  # not a tty: whole lines, at most one per log_interval
        bar = mb.Progress("gemm", 10, stream=out, log_interval=5.0, clock=lambda: now[0])
        for _ in range(10):
            now[0] += 1.0
            bar.update()
        self.assertEqual(bar.close(), 10.0)
        lines = out.getvalue().splitlines()
        self.assertEqual(len(lines), 3)  # t=1 (first), t=6, t=10 (done); close adds nothing
        self.assertIn("10/10", lines[-1])
        self.assertIn("1.0 rows/s", lines[-1])
        self.assertIn("ETA 0:00", lines[-1])
        self.assertIn(" 1/10 ", lines[0])
        self.assertIn(" 6/10 ", lines[1])


class FakeCuda:
    """torch.cuda's events on a fake clock: each call of the timed function advances it by the
    next of `costs` milliseconds (the last one repeats)."""

    def __init__(self, costs):
        self.costs, self.now, self.calls = list(costs), 0.0, 0

    def call(self):
        self.now += self.costs[min(self.calls, len(self.costs) - 1)]
        self.calls += 1

    def synchronize(self):
        pass

    def Event(self, enable_timing):  # noqa: N802 (torch's name)
        cuda = self

        class Event:
            def record(self):
                self.t = cuda.now

            def synchronize(self):
                pass

            def elapsed_time(self, end):
                return end.t - self.t

        return Event()


class TimeCallsTest(unittest.TestCase):
    def time(self, costs, **kw):
        fake = FakeCuda(costs)
        torch = type("FakeTorch", (), {"cuda": fake})
        return microbench._time_calls(torch, fake.call, **kw), fake.calls

    def test_median_of_groups_drops_the_slow_one(self):
        # warm-up 1 call, then groups of 2 calls: (1+1)/2, (5+5)/2 (a clock dip), (1+1)/2.
        ms, calls = self.time([9, 1, 1, 5, 5, 1, 1], iters=2, warmup=1, repeats=3)
        self.assertEqual(ms, 1.0)
        self.assertEqual(calls, 7)

    def test_short_groups_grow_to_min_group_ms(self):
        # 0.01 ms a call: 4 calls last 0.04 ms < 1 ms, so the probe is dropped and each of the
        # 3 groups has ceil(1 / 0.01) = 100 calls.
        ms, calls = self.time([0.01], iters=4, warmup=0, repeats=3, min_group_ms=1.0)
        self.assertAlmostEqual(ms, 0.01)
        self.assertEqual(calls, 4 + 3 * 100)

    def test_one_group_is_the_old_mean(self):
        ms, calls = self.time([3, 1, 2, 3], iters=3, warmup=1)
        self.assertEqual(ms, 2.0)
        self.assertEqual(calls, 4)


class DryRunTest(unittest.TestCase):
    def test_dry_run_needs_no_torch(self):
        out = io.StringIO()
        old = sys.stdout
        sys.stdout = out
        try:
            rc = microbench.main(["--dry-run", "--dtypes", "fp16", "--gemm-count", "4", "--op-count", "1"])
        finally:
            sys.stdout = old
        self.assertEqual(rc, 0)
        self.assertIn("4 GEMM shapes", out.getvalue())
        self.assertIn("%d operator shapes" % len(mb.OPS), out.getvalue())
        self.assertNotIn("torch", sys.modules)


if __name__ == "__main__":
    unittest.main()
