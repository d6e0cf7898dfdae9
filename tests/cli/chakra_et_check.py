"""Independent check of `shardsweep export-et` output (used by tests/cli/export_et.sh).

Decodes the traces with Python's protobuf module (chakra_et_def_pb2 compiled by protoc from
tests/cli/chakra_et_def.proto), checks every node field by field against shardsweep's per-GPU
phase breakdown (`evaluate --format csv`), recomputes every collective's time from its comm_size
with ASTRA-sim's congestion-unaware formulas (astra-sim 518bd51, re-implemented here)
and replays the graph to its critical path, which must equal export-et's iteration_ms.

usage: chakra_et_check.py PB2_DIR PREFIX EVALUATE.csv EXPORT.csv [INSPECT.csv]
"""
import csv
import json
import math
import os
import sys

sys.path.insert(0, sys.argv[1])
import chakra_et_def_pb2 as pb  # noqa: E402
import yaml  # noqa: E402
from google.protobuf.internal.decoder import _DecodeVarint32  # noqa: E402

errors = []


def check(cond, what):
    if not cond:
        errors.append(what)


def read_trace(path):
    data = open(path, "rb").read()
    pos = 0
    size, pos = _DecodeVarint32(data, pos)
    meta = pb.GlobalMetadata()
    meta.ParseFromString(data[pos:pos + size])
    pos += size
    nodes = []
    while pos < len(data):
        size, pos = _DecodeVarint32(data, pos)
        node = pb.Node()
        node.ParseFromString(data[pos:pos + size])
        nodes.append(node)
        pos += size
    return meta, nodes


def attrs(node):
    out = {}
    for a in node.attr:
        out[a.name] = (a.WhichOneof("value"), getattr(a, a.WhichOneof("value")))
    return out


# ---- ASTRA-sim congestion-unaware collective time (astra-sim 518bd51) -----------------------
def msg(dim, m, h):
    return math.floor(h * dim["latency"] + m / (dim["bandwidth"] * 2**30 / 1e9))


def hops(dim, distance):
    p = dim["npus"]
    if dim["topology"] == "Ring":
        d = distance % p
        return min(d, p - d)
    return 1 if dim["topology"] == "FullyConnected" else 2


def phase(dim, sysj, coll, alg, D):
    p, delta = dim["npus"], sysj["endpoint-delay"]
    red = lambda m: 3 * math.floor(m / sysj["local-mem-bw"])  # noqa: E731
    if alg == "ring":
        h = hops(dim, 1)
        if coll == "RS":
            return delta + (p - 1) * (msg(dim, D / p, h) + delta + red(D / p))
        if coll == "AG":
            return delta + (p - 1) * (msg(dim, D, h) + delta)
        if coll == "AR":
            return delta + (p - 1) * (2 * msg(dim, D / p, h) + 2 * delta + red(D / p))
        return delta + p * (p - 1) / 2 * (msg(dim, D / p, h) + delta)
    if alg == "direct":
        h = hops(dim, p // 2)
        if coll == "RS":
            return 2 * delta + msg(dim, D / p, h) + red(D / p)
        if coll == "AG":
            return 2 * delta + msg(dim, D, h)
        if coll == "AR":
            return 3 * delta + 2 * msg(dim, D / p, h) + red(D / p)
        return 2 * delta + msg(dim, D / p, h)
    raise SystemExit("checker: algorithm %s not implemented" % alg)


KEYS = {"AR": "all-reduce-implementation", "AG": "all-gather-implementation",
        "RS": "reduce-scatter-implementation", "A2A": "all-to-all-implementation"}


def coll_ns(net, sysj, coll, size, involved):
    dims = [d for i, d in enumerate(net) if d["npus"] > 1 and involved[i]]
    idx = [i for i, d in enumerate(net) if d["npus"] > 1 and involved[i]]
    total = math.prod(d["npus"] for d in net)
    splits, active = sysj["preferred-dataset-splits"], sysj["active-chunks-per-dimension"]
    chunk = size / splits
    if coll != "AG":
        chunk = max(chunk, total)
    alg = lambda c, i: sysj[KEYS[c]][min(i, len(sysj[KEYS[c]]) - 1)]  # noqa: E731
    phases, D = [], chunk
    n = len(dims)
    if coll == "AR" and sysj["collective-optimization"] == "localBWAware":
        shards = []
        for k in range(n - 1):
            phases.append(phase(dims[k], sysj, "RS", alg("AR", idx[k]), D))
            D /= dims[k]["npus"]
            shards.append(D)
        phases.append(phase(dims[-1], sysj, "AR", alg("AR", idx[-1]), D))
        for k in range(n - 2, -1, -1):
            phases.append(phase(dims[k], sysj, "AG", alg("AR", idx[k]), shards[k]))
    elif coll == "AG":
        for k in range(n - 1, -1, -1):
            phases.append(phase(dims[k], sysj, "AG", alg("AG", idx[k]), D))
            D *= dims[k]["npus"]
    else:
        for k in range(n):
            phases.append(phase(dims[k], sysj, coll, alg(coll, idx[k]), D))
            if coll == "RS":
                D /= dims[k]["npus"]
    batches = -(-splits // active)
    return sum(phases) + (batches - 1) * max(phases)


COMM = {0: "AR", 2: "AG", 7: "RS", 6: "A2A"}


def main():
    prefix, eval_csv, export_csv = sys.argv[2], sys.argv[3], sys.argv[4]
    d = os.path.dirname(prefix)
    netf = yaml.safe_load(open(os.path.join(d, "network.yml")))
    net = [{"topology": t, "npus": n, "bandwidth": b, "latency": l} for t, n, b, l in
           zip(netf["topology"], netf["npus_count"], netf["bandwidth"], netf["latency"])]
    sysj = json.load(open(os.path.join(d, "system.json")))
    check(sysj["roofline-enabled"] == 0, "system.json must turn the roofline off")
    check(json.load(open(os.path.join(d, "remote_memory.json"))) ==
          {"memory-type": "NO_MEMORY_EXPANSION"}, "remote_memory.json")
    ranks = math.prod(x["npus"] for x in net)
    gpus = list(csv.DictReader(open(eval_csv)))
    path = gpus[-1]
    gpus = gpus[:-1]
    exported = list(csv.DictReader(open(export_csv)))
    check(len(exported) == 1, "export-et csv: one row")
    exported = exported[0]
    check(int(exported["ranks"]) == ranks == len(gpus), "ranks")
    check(os.path.realpath(exported["workload_prefix"]) == os.path.realpath(prefix),
          "workload_prefix %s" % exported["workload_prefix"])
    iteration_ms = float(exported["iteration_ms"])
    check(abs(iteration_ms - float(path["total_ms"])) <= 1e-12 * iteration_ms,
          "export-et iteration_ms differs from evaluate")
    align = sysj["preferred-dataset-splits"] * ranks

    order = ["input_dist", "bottom_mlp_fwd", "embedding_fwd", "embedding_comm_fwd", "top_fwd",
             "top_bwd", "embedding_comm_bwd", "bottom_mlp_bwd", "embedding_bwd", "dense_allreduce"]
    base_deps = {"input_dist": [], "bottom_mlp_fwd": [],
            "embedding_fwd": ["input_dist", "bottom_mlp_fwd"],
            "embedding_comm_fwd": ["embedding_fwd"], "top_fwd": ["embedding_comm_fwd"],
            "top_bwd": ["top_fwd"], "embedding_comm_bwd": ["top_bwd"],
            "bottom_mlp_bwd": ["top_bwd"], "embedding_bwd": ["embedding_comm_bwd", "bottom_mlp_bwd"],
            "dense_allreduce": ["embedding_comm_bwd"]}
    comm_kind = {"input_dist": 6, "embedding_comm_fwd": 6, "embedding_comm_bwd": 6,
                 "dense_allreduce": 0}
    # Every GPU with less lookup work than the slowest idles explicitly until the slowest is
    # done (the model's rendezvous before the pooled all-to-all): wait = max - own, in the
    # doubles evaluate printed with 17 digits (exact).
    max_fwd = max(float(g["embedding_fwd_ms"]) for g in gpus)
    traces = []
    for r in range(ranks):
        meta, nodes = read_trace("%s.%d.et" % (prefix, r))
        traces.append(nodes)
        check(meta.version == "0.0.4", "rank %d version %r" % (r, meta.version))
        wait_ms = max_fwd - float(gpus[r]["embedding_fwd_ms"])
        expected = list(order)
        deps = dict(base_deps)
        if wait_ms > 0:
            expected.insert(expected.index("embedding_comm_fwd"), "wait_embedding_comm_fwd")
            deps["wait_embedding_comm_fwd"] = ["embedding_fwd"]
            deps["embedding_comm_fwd"] = ["wait_embedding_comm_fwd"]
        gpus[r]["wait_embedding_comm_fwd_ms"] = repr(wait_ms)
        check([n.name for n in nodes] == expected,
              "rank %d node names %s" % (r, [n.name for n in nodes]))
        if [n.name for n in nodes] != expected:
            continue
        ids = {n.name: n.id for n in nodes}
        check([n.id for n in nodes] == list(range(len(nodes))), "rank %d ids" % r)
        cum_ns, written = 0.0, 0
        for n in nodes:
            a = attrs(n)
            check(a.get("is_cpu_op") == ("bool_val", False), "rank %d %s is_cpu_op" % (r, n.name))
            check(list(n.data_deps) == [ids[x] for x in deps[n.name]],
                  "rank %d %s data_deps %s" % (r, n.name, list(n.data_deps)))
            check(list(n.ctrl_deps) == [] and n.start_time_micros == 0, "rank %d %s" % (r, n.name))
            if n.name in comm_kind:
                check(n.type == pb.COMM_COLL_NODE, "rank %d %s type" % (r, n.name))
                check(n.duration_micros == 0, "rank %d %s duration" % (r, n.name))
                check(set(a) == {"is_cpu_op", "comm_type", "comm_size", "pg_name", "involved_dim"},
                      "rank %d %s attributes %s" % (r, n.name, sorted(a)))
                check(a["comm_type"] == ("int64_val", comm_kind[n.name]), "comm_type")
                check(a["pg_name"] == ("string_val", "0"), "pg_name")
                check(a["involved_dim"][0] == "bool_list" and
                      list(a["involved_dim"][1].values) == [True] * len(net), "involved_dim")
                size = a["comm_size"][1]
                check(a["comm_size"][0] == "int64_val" and size > 0 and size % align == 0,
                      "rank %d %s comm_size %s not a multiple of %d" % (r, n.name, size, align))
                # The model's time of this collective (whole ns) and what ASTRA-sim makes of
                # comm_size: the all-to-alls are the smallest aligned size reaching the model's
                # time, the all-reduce the model's gradient bytes rounded to the alignment.
                model_ns = round(float(gpus[r][n.name + "_ms"]) * 1e6)
                kind = COMM[comm_kind[n.name]]
                t = coll_ns(net, sysj, kind, size, [True] * len(net))
                if kind == "A2A":
                    check(t >= model_ns and coll_ns(net, sysj, kind, size - align,
                                                    [True] * len(net)) < model_ns,
                          "rank %d %s: %s ns for comm_size %d, model %d ns" %
                          (r, n.name, t, size, model_ns))
                else:
                    check(abs(t - model_ns) <= 2, "rank %d all-reduce %s ns, model %s" %
                          (r, t, model_ns))
            else:
                check(n.type == pb.COMP_NODE, "rank %d %s type" % (r, n.name))
                check(set(a) == {"is_cpu_op"}, "rank %d %s attributes" % (r, n.name))
                cum_ns += float(gpus[r][n.name + "_ms"]) * 1e6
                end_us = math.floor(cum_ns / 1000 + 0.5)
                check(n.duration_micros == end_us - written,
                      "rank %d %s duration %d us, expected %d" %
                      (r, n.name, n.duration_micros, end_us - written))
                written = end_us
        # Every rank's graph has the same collectives (sizes included).
        if r > 0 and len(traces[0]) == len(nodes):
            for n0, n in zip(traces[0], nodes):
                if n.type == pb.COMM_COLL_NODE:
                    check(attrs(n0)["comm_size"] == attrs(n)["comm_size"], "comm sizes differ")

    # Replay: a node starts when its data_deps are done; the k-th collective starts on every rank
    # when the last one is ready; compute lasts duration_micros * 1000 ns (0 -> 1 ns).
    finish = [dict() for _ in range(ranks)]
    ready = [dict() for _ in range(ranks)]
    colls = [[n.id for n in t if n.type == pb.COMM_COLL_NODE] for t in traces]
    progress = True
    while progress:
        progress = False
        for r, nodes in enumerate(traces):
            for n in nodes:
                if n.id in finish[r] or any(d not in finish[r] for d in n.data_deps):
                    continue
                if n.id not in ready[r]:
                    ready[r][n.id] = max([finish[r][d] for d in n.data_deps], default=0)
                    progress = True
                if n.type == pb.COMP_NODE:
                    finish[r][n.id] = ready[r][n.id] + (n.duration_micros * 1000 or 1)
                    progress = True
                else:
                    k = colls[r].index(n.id)
                    peers = [colls[q][k] for q in range(ranks)]
                    if all(peers[q] in ready[q] for q in range(ranks)):
                        a = attrs(n)
                        t = coll_ns(net, sysj, COMM[a["comm_type"][1]], a["comm_size"][1],
                                    list(a["involved_dim"][1].values))
                        end = max(ready[q][peers[q]] for q in range(ranks)) + t
                        for q in range(ranks):
                            finish[q][peers[q]] = end
                        progress = True
    rank_end = [max(f.values()) for f in finish]
    critical_ms = max(rank_end) * 1e-6
    # Each compute node ends within 0.5 us of its exact cumulative time on its rank; the path
    # changes rank at most at every collective: allow 1 us per collective plus 0.5.
    tol_ms = (0.5 + len(colls[0])) * 1e-3
    check(abs(critical_ms - iteration_ms) <= tol_ms,
          "critical path %.9f ms vs iteration %.9f ms" % (critical_ms, iteration_ms))
    check(abs(critical_ms - float(exported["critical_path_ms"])) <= 1e-9,
          "export-et critical_path_ms %s vs %s" % (exported["critical_path_ms"], critical_ms))

    if len(sys.argv) > 5:
        rows = list(csv.DictReader(open(sys.argv[5])))
        check(len(rows) == ranks + 1 and rows[-1]["rank"] == "critical_path", "inspect rows")
        for r in range(ranks):
            row, nodes = rows[r], traces[r]
            check(int(row["nodes"]) == len(nodes), "inspect nodes")
            check(int(row["comp_nodes"]) == sum(1 for n in nodes if n.type == pb.COMP_NODE),
                  "inspect comp nodes rank %d" % r)
            check(int(row["coll_nodes"]) == len(colls[r]), "inspect coll nodes")
            comp_ms = sum(max(n.duration_micros * 1000, 1) for n in nodes
                          if n.type == pb.COMP_NODE) * 1e-6
            check(abs(float(row["compute_ms"]) - comp_ms) <= 1e-12, "inspect compute_ms")
            for col, kind in (("all_to_all_bytes", 6), ("all_reduce_bytes", 0)):
                want = sum(attrs(n)["comm_size"][1] for n in nodes if n.type == pb.COMM_COLL_NODE
                           and attrs(n)["comm_type"][1] == kind)
                check(int(row[col]) == want, "inspect %s rank %d" % (col, r))
            check(abs(float(row["finish_ms"]) - rank_end[r] * 1e-6) <= 1e-9,
                  "inspect finish rank %d: %s vs %s" % (r, row["finish_ms"], rank_end[r] * 1e-6))
        check(abs(float(rows[-1]["finish_ms"]) - critical_ms) <= 1e-9, "inspect critical path")

    if errors:
        print("FAIL:\n  " + "\n  ".join(errors[:20]))
        sys.exit(1)
    print("%s: %d ranks, critical path %.6f ms, iteration %.6f ms" %
          (prefix, ranks, critical_ms, iteration_ms))


if __name__ == "__main__":
    main()
