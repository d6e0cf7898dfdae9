#!/usr/bin/python3
"""Random single collectives: shardsweep's `predict collective` against ASTRA-sim.

Each case draws a network (2 to 4 dimensions of Ring / Switch / FullyConnected, 4 to 64 NPUs,
bandwidths and latencies), a system file (ring, direct or halving-doubling on every dimension,
localBWAware, 1 to 32 splits, 1 to 4 active chunks, a local memory bandwidth) and a comm_size
divisible by splits x NPUs (where ASTRA-sim's integer chunking equals shardsweep's division,
docs/model/collectives.md "Sizes that do not divide evenly"). It writes one Chakra trace per NPU
holding that one collective, runs AstraSim_Analytical_Congestion_Unaware on it, and compares the
slowest NPU's `finished` cycles with shardsweep's time in ns: every case must agree to the ns
(docs/model/chakra.md, "Agreement with ASTRA-sim").

ASTRA-sim is a development tool, not a dependency: build it yourself (docs/model/chakra.md) and
point ASTRA_SIM at the binary. Needs protoc and python3-protobuf (scripts/setup.sh installs both).

usage: ASTRA_SIM=/path/to/AstraSim_Analytical_Congestion_Unaware \\
           scripts/astra_collectives.py SHARDSWEEP [--seed N] [--cases N]
           [--collectives all_reduce,reduce_scatter,all_gather,all_to_all]
exit status: 0 when every case agrees, 1 otherwise, 2 on a usage error.
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO = os.path.join(HERE, "..", "tests", "cli", "chakra_et_def.proto")
COMM_TYPE = {"all_reduce": 0, "all_gather": 2, "all_to_all": 6, "reduce_scatter": 7}


def load_et_module(work):
    subprocess.run(["protoc", "--python_out=" + work, "-I" + os.path.dirname(PROTO),
                    os.path.basename(PROTO)], check=True)
    sys.path.insert(0, work)
    module = os.path.splitext(os.path.basename(PROTO))[0] + "_pb2"
    return __import__(module)


def write_traces(pb, prefix, npus, collective, size):
    from google.protobuf.internal.encoder import _VarintBytes
    for rank in range(npus):
        node = pb.Node(id=0, name="collective", type=pb.COMM_COLL_NODE)
        for name, field, value in (("is_cpu_op", "bool_val", False),
                                   ("comm_type", "int64_val", COMM_TYPE[collective]),
                                   ("comm_size", "int64_val", size)):
            attr = node.attr.add(name=name)
            setattr(attr, field, value)
        with open(f"{prefix}.{rank}.et", "wb") as f:
            for message in (pb.GlobalMetadata(version="0.0.4"), node):
                data = message.SerializeToString()
                f.write(_VarintBytes(len(data)) + data)


def draw_case(rng, collectives):
    dims = rng.choice([2, 2, 3, 3, 4])
    while True:
        npus = [rng.choice([2, 2, 4, 8]) for _ in range(dims)]
        total = 1
        for p in npus:
            total *= p
        if total <= 64:
            break
    network = {"topology": [rng.choice(["Ring", "Switch", "FullyConnected"]) for _ in npus],
               "npus_count": npus,
               "bandwidth": [rng.choice([25, 50, 100, 200, 400]) for _ in npus],
               "latency": [rng.choice([50, 200, 500, 1000, 2000]) for _ in npus]}
    splits = rng.choice([1, 2, 3, 4, 5, 6, 8, 12, 16, 24, 32])
    active = rng.choice([1, 1, 2, 3, 4])
    algorithm = rng.choice(["ring", "direct", "halvingDoubling"])
    system = {"scheduling-policy": rng.choice(["LIFO", "FIFO"]), "endpoint-delay": 10,
              "active-chunks-per-dimension": active, "preferred-dataset-splits": splits,
              "all-reduce-implementation": [algorithm] * dims,
              "all-gather-implementation": [algorithm] * dims,
              "reduce-scatter-implementation": [algorithm] * dims,
              # ASTRA-sim has no halving-doubling all-to-all.
              "all-to-all-implementation":
                  ["direct" if algorithm == "halvingDoubling" else algorithm] * dims,
              "collective-optimization": "localBWAware",
              "local-mem-bw": rng.choice([50, 900, 1600, 3350])}
    collective = rng.choice(collectives)
    size = splits * total * rng.choice([64, 256, 1024, 4096, 16384, 65536])
    return network, system, collective, size, total


def run_case(pb, work, shardsweep, astra, network, system, collective, size, npus):
    net_path, sys_path = os.path.join(work, "network.yml"), os.path.join(work, "system.json")
    mem_path = os.path.join(work, "memory.json")
    with open(net_path, "w") as f:
        for key in ("topology", "npus_count", "bandwidth", "latency"):
            f.write(f"{key}: [ {', '.join(str(v) for v in network[key])} ]\n")
    with open(sys_path, "w") as f:
        json.dump(system, f)
    with open(mem_path, "w") as f:
        json.dump({"memory-type": "NO_MEMORY_EXPANSION"}, f)
    prefix = os.path.join(work, "et", "trace")
    os.makedirs(os.path.dirname(prefix), exist_ok=True)
    write_traces(pb, prefix, npus, collective, size)
    sim = subprocess.run([astra, "--workload-configuration=" + prefix,
                          "--system-configuration=" + sys_path,
                          "--remote-memory-configuration=" + mem_path,
                          "--network-configuration=" + net_path,
                          "--logging-folder=" + os.path.join(work, "log")],
                         capture_output=True, text=True, timeout=600)
    cycles = [int(c) for c in re.findall(r"finished, (\d+) cycles", sim.stdout + sim.stderr)]
    if len(cycles) != npus:
        raise RuntimeError("ASTRA-sim did not finish every NPU:\n" + sim.stderr[-800:])
    model = subprocess.run([shardsweep, "predict", "collective", "--network", net_path,
                            "--system", sys_path, "--collective", collective, "--bytes",
                            str(size), "--format", "csv"], capture_output=True, text=True)
    if model.returncode != 0:
        raise RuntimeError("shardsweep predict collective failed:\n" + model.stderr)
    return max(cycles), float(model.stdout.strip().splitlines()[-1].split(",")[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("shardsweep", help="the shardsweep binary")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--cases", type=int, default=150)
    parser.add_argument("--collectives", default="all_reduce",
                        help="comma-separated: all_reduce,reduce_scatter,all_gather,all_to_all")
    args = parser.parse_args()
    astra = os.environ.get("ASTRA_SIM")
    collectives = args.collectives.split(",")
    if not astra or any(c not in COMM_TYPE for c in collectives):
        parser.error("set ASTRA_SIM to the AstraSim_Analytical_Congestion_Unaware binary and "
                     "name collectives among " + ",".join(COMM_TYPE))
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as work:
        pb = load_et_module(work)
        print("case,collective,topology,npus_count,algorithm,splits,active,bytes,"
              "astra_sim_ns,shardsweep_ns,agree")
        agree = chunked = 0
        for case in range(args.cases):
            network, system, collective, size, npus = draw_case(rng, collectives)
            astra_ns, model_ns = run_case(pb, work, args.shardsweep, astra, network, system,
                                          collective, size, npus)
            same = astra_ns == model_ns
            agree += same
            chunked += system["preferred-dataset-splits"] > system["active-chunks-per-dimension"]
            print(f"{case},{collective},{'x'.join(network['topology'])},"
                  f"{'x'.join(str(p) for p in network['npus_count'])},"
                  f"{system['all-reduce-implementation'][0]},{system['preferred-dataset-splits']},"
                  f"{system['active-chunks-per-dimension']},{size},{astra_ns},{model_ns:.0f},"
                  f"{'yes' if same else 'NO'}", flush=True)
        print(f"# {agree} of {args.cases} cases agree to the ns ({chunked} with more splits than "
              f"active chunks)", file=sys.stderr)
    return 0 if agree == args.cases else 1


if __name__ == "__main__":
    sys.exit(main())
