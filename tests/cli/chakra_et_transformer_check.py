"""Independent check of `shardsweep export-et` for a transformer scenario (tests/cli/export_et.sh).

Decodes the traces with Python's protobuf module and checks them against the parallel
configuration and `evaluate --format csv`: the communicator groups (Megatron-LM's tp-dp-pp rank
order), every collective's pg_name, the pipeline schedule of every rank (1F1B or GPipe order of
the micro-batches' forward and backward), every send matched by a receive on the neighbouring
stage, each rank's busy time (compute + its collectives + its sends, times recomputed from
comm_size with ASTRA-sim's formulas, sub-groups as ASTRA-sim prices them: one ring over the
members) against the stage's busy_ms, and the replayed critical path against iteration_ms,
export-et's critical_path_ms and inspect-et's rows.

Optional knobs after the schedule: vN (interleaved 1F1B with N model chunks per rank: Megatron-LM's
order, the layers of every chunk, the wrap-around messages between the last and the first
stage), cpN (context parallelism: Megatron's tp-cp-dp-pp rank order and the rings of cp ranks),
epN and etpN (mixture of experts: the EP, ETP and expert-DP groups of MoE parallel folding).

usage: chakra_et_transformer_check.py PB2_DIR PREFIX EVALUATE.csv EXPORT.csv INSPECT.csv
                                      TP PP DP MICRO_BATCHES 1f1b|gpipe [vN] [cpN] [epN] [etpN]
"""
import csv
import re
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
    knobs = {"v": 1, "cp": 1, "ep": 1, "etp": 1}
    for arg in sys.argv[11:]:
        key = re.match(r"[a-z]+", arg).group(0)
        knobs[key] = int(arg[len(key):])
    v, cp, ep, etp = knobs["v"], knobs["cp"], knobs["ep"], knobs["etp"]
    reps = cp * dp  # a stage's TP rank has cp*dp replicas, index c + cp*d (tp-cp-dp-pp order)
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
    ranks = tp * pp * reps
    check(int(exported["ranks"]) == ranks, "ranks")
    rank = lambda t, dd, s: t + tp * (dd + reps * s)  # noqa: E731

    def expert_rank(r):
        """An MoE rank's (stage, expert-TP, EP, expert-DP) index: the stage's q-th rank is
        (q mod etp, (q / etp) mod ep, q / (etp * ep))."""
        s, q = r // (tp * reps), r % (tp * reps)
        return s, q % etp, (q // etp) % ep, q // (etp * ep)

    def from_expert(s, et, e, ed):
        return s * tp * reps + et + etp * (e + ep * ed)

    edp = tp * reps // (ep * etp)

    def members_of(name, r):
        """The group a collective of rank r runs on, from its name."""
        t, dd, s = r % tp, (r // tp) % reps, r // (tp * reps)
        c, d = dd % cp, dd // cp
        base = name.split("@")[0]
        if "ep_dispatch" in base or "ep_combine" in base:
            st, et, _, ed = expert_rank(r)
            return [from_expert(st, et, e, ed) for e in range(ep)]
        if ".etp_" in base:
            st, _, e, ed = expert_rank(r)
            return [from_expert(st, et, e, ed) for et in range(etp)]
        if base.startswith("edp.") or base.startswith("zero3.edp"):
            st, et, e, _ = expert_rank(r)
            return [from_expert(st, et, e, ed) for ed in range(edp)]
        if "cp_kv" in base:
            return [rank(t, q + cp * d, s) for q in range(cp)]
        if base.startswith("embedding.grad"):
            return [rank(t, dd, 0), rank(t, dd, pp - 1)]
        if base.startswith("dp.") or base.startswith("zero3."):
            return [rank(t, q, s) for q in range(reps)]
        check(re.search(r"(^|[._])tp", base.split(".")[-1]) is not None,
              "rank %d %s: which group?" % (r, name))
        return [rank(q, dd, s) for q in range(tp)]

    # Communicator groups: TP (consecutive), DP (stride tp), first/last stage pairs, CP rings,
    # MoE's EP, ETP and expert-DP groups; one of every rank is pg 0, not listed.
    want = set()
    for r in range(ranks):
        t, dd, s = r % tp, (r // tp) % reps, r // (tp * reps)
        for name, n in (("x.tp", tp), ("dp.x", reps), ("embedding.grad", 2 if pp > 1 else 1),
                        ("x.cp_kv", cp), ("x.ep_dispatch", ep), ("x.etp_ag", etp),
                        ("edp.x", edp if ep * etp > 1 else 1)):
            if 1 < n < ranks:
                want.add(tuple(members_of(name, r)))
    check(set(tuple(v) for v in groups.values()) == want,
          "comm_groups.json %s, expected %s" % (sorted(groups.values()), sorted(want)))

    def passes(s):
        """Megatron-LM's order of stage s's passes (schedules.py): 1F1B, GPipe, or with v chunks
        forward_backward_pipelining_with_interleaving (get_model_chunk_id)."""
        total = m * v

        def chunk_pass(k, fwd):
            c = (k % (pp * v)) // pp
            return ("F" if fwd else "B", (k // (pp * v)) * pp + k % pp, c if fwd else v - 1 - c)
        if schedule == "gpipe":
            w = total
        elif v > 1:
            w = min(2 * (pp - s - 1) + (v - 1) * pp, total)
        else:
            w = min(pp - s - 1, total)
        out = [chunk_pass(k, True) for k in range(w)]
        for k in range(total - w):
            out += [chunk_pass(w + k, True), chunk_pass(k, False)]
        return out + [chunk_pass(k, False) for k in range(total - w, total)]

    traces = [read_trace("%s.%d.et" % (prefix, r))[1] for r in range(ranks)]
    n_layers = len({re.match(r"layer(\d+)\.fwd@", n.name).group(1) for nodes in traces
                    for n in nodes if re.match(r"layer(\d+)\.fwd@", n.name)})
    own_ns = [0.0] * ranks
    for r, nodes in enumerate(traces):
        t, dd, s = r % tp, (r // tp) % reps, r // (tp * reps)
        for i, n in enumerate(nodes):
            check(n.id == i and list(n.data_deps) == ([i - 1] if i else []),
                  "rank %d node %d: a serial chain" % (r, i))
            a = attrs(n)
            if n.type == pb.COMM_COLL_NODE:
                g = int(a["pg_name"][1])
                members = groups[g] if g else list(range(ranks))
                expect = members_of(n.name, r)
                check(members == expect, "rank %d %s: group %s, expected %s" %
                      (r, n.name, members, expect))
                own_ns[r] += group_ns(net, sysj, members, COMM[a["comm_type"][1]],
                                      a["comm_size"][1])
            elif n.type in (pb.COMM_SEND_NODE, pb.COMM_RECV_NODE):
                src, dst, size = a["comm_src"][1], a["comm_dst"][1], a["comm_size"][1]
                send = n.type == pb.COMM_SEND_NODE
                peer = dst if send else src
                check((send and src == r) or (not send and dst == r), "rank %d %s" % (r, n.name))
                fwd = "_act" in n.name
                k = int(n.name.split("@mb")[1])
                c = int(re.search(r"\.chunk(\d+)@", n.name).group(1)) if v > 1 else 0
                # Downstream: the next stage, from the last to the first stage's next chunk.
                down = fwd == send
                wrap = s == (pp - 1 if down else 0)
                peer_s = (0 if down else pp - 1) if wrap else (s + 1 if down else s - 1)
                check(peer == rank(t, dd, peer_s), "rank %d %s: peer %d" % (r, n.name, peer))
                # The tag names the receiving chunk: 2(k*v + c) + (1 for gradients).
                recv_c = c + (1 if down else -1) if (send and wrap) else c
                check(a["comm_tag"][1] == 2 * (k * v + recv_c) + (0 if fwd else 1),
                      "rank %d %s tag %d" % (r, n.name, a["comm_tag"][1]))
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
        # The schedule: every pass ends in its message (or an unpaired one), whose name gives
        # its micro-batch and chunk; the layers between two ends are that chunk's.
        order, layers_in = [], []
        for n in nodes:
            lay = re.match(r"layer(\d+)\.(fwd|bwd)@", n.name)
            if lay:
                layers_in.append(int(lay.group(1)))
            end = re.match(r"pp\.(send_act|fwd_unpaired|send_grad|bwd_unpaired)"
                           r"(?:\.chunk(\d+))?@mb(\d+)$", n.name)
            if end:
                op = "F" if end.group(1) in ("send_act", "fwd_unpaired") else "B"
                c = int(end.group(2) or 0)
                order.append((op, int(end.group(3)), c))
                per = n_layers // (pp * v)
                span = list(range((c * pp + s) * per, (c * pp + s + 1) * per))
                check(sorted(layers_in) == span, "rank %d %s: layers %s, expected %s" %
                      (r, n.name, layers_in, span))
                layers_in = []
        check(order == passes(s), "rank %d schedule %s, expected %s" % (r, order, passes(s)))
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
    if v > 1:
        # Interleaved: the model's closed form (m - 1/v) max_i(F_i + B_i) + sum_i(F_i + B_i)/v is
        # exact for chunks of equal time (unit.TransformerModern's event simulation); the
        # embedding and the head lengthen the first and the last chunk, which moves the fill and
        # drain by a constant the replay shows (docs/model/chakra.md: 0.03-0.1 % on full-size
        # models; up to 3 % on this 4-layer test model, where they are a large part of a chunk).
        tol_ms = 0.04 * iteration_ms
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
