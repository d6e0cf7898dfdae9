"""Independent check of `shardsweep export-et` for a transformer scenario (tests/cli/export_et.sh).

Decodes the traces with Python's protobuf module and checks them against the parallel
configuration and `evaluate --format csv`: the communicator groups (Megatron-LM's tp-dp-pp rank
order), every collective's pg_name, the pipeline schedule of every rank (1F1B or GPipe order of
the micro-batches' forward and backward), every send matched by a receive on the neighbouring
stage, each rank's busy time (compute + its collectives + its sends, times recomputed from
comm_size with ASTRA-sim's formulas, sub-groups as ASTRA-sim prices them: one ring over the
members) against the stage's busy_ms, and the replayed critical path against iteration_ms,
export-et's critical_path_ms and inspect-et's rows.

usage: chakra_et_transformer_check.py PB2_DIR PREFIX EVALUATE.csv EXPORT.csv INSPECT.csv
                                      TP PP DP MICRO_BATCHES 1f1b|gpipe
"""
import csv
import json
import os
import sys

from chakra_et_check import COMM, KEYS, attrs, coll_ns, hops, msg, pb, read_trace

errors = []


def check(cond, what):
    if not cond:
        errors.append(what)


def coords(net, rank):
    out = []
    for d in net:
        out.append(rank % d["npus"])
        rank //= d["npus"]
    return out


def p2p_ns(net, src, dst, size):
    a, b = coords(net, src), coords(net, dst)
    for k, d in enumerate(net):
        if a[k] != b[k]:
            return msg(d, size, hops(d, (b[k] - a[k]) % d["npus"]))
    return 0


def group_ns(net, sysj, members, kind, size):
    """A collective on a sub-group: one logical ring over the members (ASTRA-sim's
    CommunicatorGroup), ring algorithm when the network has several dimensions; every message
    on the first dimension where the two NPUs differ."""
    dim, h = len(net) - 1, 0
    for i, a in enumerate(members):
        b = members[(i + 1) % len(members)]
        ca, cb = coords(net, a), coords(net, b)
        k = next(k for k in range(len(net)) if ca[k] != cb[k])
        dim, h = min(dim, k), max(h, hops(net[k], (cb[k] - ca[k]) % net[k]["npus"]))
    view = [dict(net[dim], topology="FullyConnected", npus=len(members),
                 latency=net[dim]["latency"] * max(h, 1))]
    s = dict(sysj)
    if len(net) > 1:
        for key in KEYS.values():
            s[key] = ["ring"]
    return coll_ns(view, s, kind, size, [True])


def main():
    prefix, eval_csv, export_csv, inspect_csv = sys.argv[2:6]
    tp, pp, dp, m = (int(x) for x in sys.argv[6:10])
    schedule = sys.argv[10]
    d = os.path.dirname(prefix)
    import yaml
    netf = yaml.safe_load(open(os.path.join(d, "network.yml")))
    net = [{"topology": t, "npus": n, "bandwidth": b, "latency": lat} for t, n, b, lat in
           zip(netf["topology"], netf["npus_count"], netf["bandwidth"], netf["latency"])]
    sysj = json.load(open(os.path.join(d, "system.json")))
    groups = {int(k): v for k, v in json.load(open(os.path.join(d, "comm_groups.json"))).items()}
    stages = {row["stage"]: row for row in csv.DictReader(open(eval_csv))}
    iteration_ms = float(stages["critical_path"]["iteration_ms"])
    exported = next(csv.DictReader(open(export_csv)))
    ranks = tp * pp * dp
    check(int(exported["ranks"]) == ranks, "ranks")
    rank = lambda t, dd, s: t + tp * (dd + dp * s)  # noqa: E731

    # Communicator groups: TP (consecutive), DP (stride tp), first/last stage pairs.
    want = set()
    for s in range(pp):
        for dd in range(dp):
            if tp > 1:
                want.add(tuple(rank(t, dd, s) for t in range(tp)))
    for s in range(pp):
        for t in range(tp):
            if dp > 1:
                want.add(tuple(rank(t, dd, s) for dd in range(dp)))
    if pp > 1:
        for dd in range(dp):
            for t in range(tp):
                want.add((rank(t, dd, 0), rank(t, dd, pp - 1)))
    check(set(tuple(v) for v in groups.values()) == want,
          "comm_groups.json %s, expected %s" % (sorted(groups.values()), sorted(want)))

    traces = [read_trace("%s.%d.et" % (prefix, r))[1] for r in range(ranks)]
    own_ns = [0.0] * ranks
    for r, nodes in enumerate(traces):
        t, dd, s = r % tp, (r // tp) % dp, r // (tp * dp)
        for i, n in enumerate(nodes):
            check(n.id == i and list(n.data_deps) == ([i - 1] if i else []),
                  "rank %d node %d: a serial chain" % (r, i))
            a = attrs(n)
            if n.type == pb.COMM_COLL_NODE:
                members = groups[int(a["pg_name"][1])]
                if ".tp" in n.name:
                    expect = [rank(q, dd, s) for q in range(tp)]
                elif n.name.startswith("embedding.grad"):
                    expect = [rank(t, dd, 0), rank(t, dd, pp - 1)]
                else:
                    expect = [rank(t, q, s) for q in range(dp)]
                check(members == expect, "rank %d %s: group %s" % (r, n.name, members))
                own_ns[r] += group_ns(net, sysj, members, COMM[a["comm_type"][1]],
                                      a["comm_size"][1])
            elif n.type in (pb.COMM_SEND_NODE, pb.COMM_RECV_NODE):
                src, dst, size = a["comm_src"][1], a["comm_dst"][1], a["comm_size"][1]
                send = n.type == pb.COMM_SEND_NODE
                peer = dst if send else src
                check((send and src == r) or (not send and dst == r), "rank %d %s" % (r, n.name))
                fwd = "_act" in n.name
                check(peer == rank(t, dd, s + 1 if fwd == send else s - 1),
                      "rank %d %s: peer %d" % (r, n.name, peer))
                k = int(n.name.split("@mb")[1])
                check(a["comm_tag"][1] == 2 * k + (0 if fwd else 1), "rank %d %s tag" % (r, n.name))
                if send:
                    own_ns[r] += p2p_ns(net, src, dst, size)
                    match = [x for x in traces[dst] if x.type == pb.COMM_RECV_NODE and
                             attrs(x)["comm_src"][1] == r and attrs(x)["comm_tag"][1] ==
                             a["comm_tag"][1]]
                    check(len(match) == 1 and attrs(match[0])["comm_size"][1] == size,
                          "rank %d %s: no matching receive" % (r, n.name))
            else:
                check(n.type == pb.COMP_NODE, "rank %d %s type" % (r, n.name))
                own_ns[r] += max(n.duration_micros * 1000, 1)
        # The schedule: micro-batches' forward / backward in 1F1B or GPipe order.
        order = []
        for n in nodes:
            for tag, op in ((".fwd@mb", "F"), (".bwd@mb", "B")):
                if tag in n.name and (op, int(n.name.split("@mb")[1])) not in order:
                    order.append((op, int(n.name.split("@mb")[1])))
        if schedule == "gpipe":
            expect = [("F", k) for k in range(m)] + [("B", k) for k in range(m)]
        else:
            w = min(pp - s - 1, m)
            expect = [("F", k) for k in range(w)]
            for k in range(m - w):
                expect += [("F", w + k), ("B", k)]
            expect += [("B", k) for k in range(m - w, m)]
        check(order == expect, "rank %d schedule %s" % (r, order))
        # Busy time: the stage's busy_ms within the whole-us rounding (one rounding per rank)
        # and comm_size's granularity (a few ns per collective).
        busy = float(stages[str(s)]["busy_ms"]) * 1e6
        ncoll = sum(1 for n in nodes if n.type != pb.COMP_NODE)
        check(abs(own_ns[r] - busy) <= 500 + 10 * ncoll,
              "rank %d busy %.0f ns, evaluate %.0f ns" % (r, own_ns[r], busy))

    # Replay (ASTRA-sim's rules): serial chains; the k-th collective of a group starts when its
    # last member is ready; a receive completes when its send (sender's time) has.
    pos, ready, finish = [0] * ranks, [[None] * len(t) for t in traces], [[None] * len(t)
                                                                         for t in traces]
    inst = {}
    progress = True
    while progress:
        progress = False
        for r, nodes in enumerate(traces):
            while pos[r] < len(nodes):
                i = pos[r]
                n, a = nodes[i], attrs(nodes[i])
                start = finish[r][i - 1] if i else 0
                ready[r][i] = start
                if n.type == pb.COMP_NODE:
                    finish[r][i] = start + max(n.duration_micros * 1000, 1)
                elif n.type == pb.COMM_SEND_NODE:
                    finish[r][i] = start + p2p_ns(net, r, a["comm_dst"][1], a["comm_size"][1])
                elif n.type == pb.COMM_RECV_NODE:
                    src, tag = a["comm_src"][1], a["comm_tag"][1]
                    j = next(j for j, x in enumerate(traces[src]) if x.type == pb.COMM_SEND_NODE
                             and attrs(x)["comm_dst"][1] == r and attrs(x)["comm_tag"][1] == tag)
                    if finish[src][j] is None:
                        break
                    finish[r][i] = max(start, finish[src][j])
                else:
                    g = int(a["pg_name"][1])
                    key = (r, i)
                    if key not in inst:
                        inst[key] = sum(1 for x in nodes[:i] if x.type == pb.COMM_COLL_NODE and
                                        attrs(x)["pg_name"][1] == a["pg_name"][1])
                    peers = []
                    for q in groups[g]:
                        cand = [j for j, x in enumerate(traces[q]) if x.type == pb.COMM_COLL_NODE
                                and attrs(x)["pg_name"][1] == a["pg_name"][1]]
                        peers.append((q, cand[inst[key]]))
                    if any(ready[q][j] is None for q, j in peers):
                        break
                    end = max(ready[q][j] for q, j in peers) + group_ns(
                        net, sysj, groups[g], COMM[a["comm_type"][1]], a["comm_size"][1])
                    for q, j in peers:
                        finish[q][j] = end
                while pos[r] < len(nodes) and finish[r][pos[r]] is not None:
                    pos[r] += 1
                progress = True
    check(all(p == len(t) for p, t in zip(pos, traces)), "replay did not finish: %s" % pos)
    rank_end = [f[-1] for f in finish]
    critical_ms = max(rank_end) * 1e-6
    # Each compute node ends within 0.5 us of its exact time on its rank; sizes are rounded up
    # to comm_size's granularity (a few ns per communication on the path).
    tol_ms = 1e-3 + 10e-6 * max(len(t) for t in traces)
    check(abs(critical_ms - iteration_ms) <= tol_ms,
          "critical path %.9f ms vs iteration %.9f ms" % (critical_ms, iteration_ms))
    check(abs(critical_ms - float(exported["critical_path_ms"])) <= 1e-9,
          "export-et critical_path_ms %s vs %s" % (exported["critical_path_ms"], critical_ms))

    rows = list(csv.DictReader(open(inspect_csv)))
    check(len(rows) == ranks + 1 and rows[-1]["rank"] == "critical_path", "inspect rows")
    for r, nodes in enumerate(traces):
        row = rows[r]
        for col, kind in (("comp_nodes", pb.COMP_NODE), ("coll_nodes", pb.COMM_COLL_NODE),
                          ("send_nodes", pb.COMM_SEND_NODE), ("recv_nodes", pb.COMM_RECV_NODE)):
            check(int(row[col]) == sum(1 for n in nodes if n.type == kind),
                  "inspect %s rank %d" % (col, r))
        comp_ms = sum(max(n.duration_micros * 1000, 1) for n in nodes
                      if n.type == pb.COMP_NODE) * 1e-6
        check(abs(float(row["compute_ms"]) - comp_ms) <= 1e-9, "inspect compute_ms rank %d" % r)
        for col, kind in (("all_reduce_bytes", 0), ("all_gather_bytes", 2),
                          ("reduce_scatter_bytes", 7)):
            want_b = sum(attrs(n)["comm_size"][1] for n in nodes if n.type == pb.COMM_COLL_NODE
                         and attrs(n)["comm_type"][1] == kind)
            check(int(row[col]) == want_b, "inspect %s rank %d" % (col, r))
        check(int(row["send_bytes"]) == sum(attrs(n)["comm_size"][1] for n in nodes
                                            if n.type == pb.COMM_SEND_NODE), "inspect send bytes")
        check(abs(float(row["finish_ms"]) - rank_end[r] * 1e-6) <= 1e-9,
              "inspect finish rank %d" % r)
    check(abs(float(rows[-1]["finish_ms"]) - critical_ms) <= 1e-9, "inspect critical path")

    if errors:
        print("FAIL:\n  " + "\n  ".join(errors[:20]))
        sys.exit(1)
    print("%s: %d ranks, critical path %.6f ms, iteration %.6f ms" %
          (prefix, ranks, critical_ms, iteration_ms))


if __name__ == "__main__":
    main()
