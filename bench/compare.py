#!/usr/bin/env python3
"""Times the flagship training step in PyTorch and in gokeras, side by side.

Runs bench/torch_mlp.py and `train --benchmark` (built from this checkout)
in alternation, a few rounds per batch size, and prints the median of each
one's medians and their ratio. PyTorch gets its fastest thread setting on
this machine: one intra-op thread (OpenBLAS still uses every core) or all
cores with passive OpenMP waiting; both are tried each round.
"""
import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MEDIAN = re.compile(r"median (\d+\.\d+) ms/step")
# Arithmetic of one step of the flagship per sample: two products for the
# first layer (its input needs no gradient), three for the others.
FLOPS_PER_SAMPLE = 2 * (2 * 3072 * 3000 + 3 * 3000 * 1000 + 3 * 1000 * 10)


PAUSE = 5.0  # seconds of rest before each run, set by --pause


def median_of(cmd, env=None):
    time.sleep(PAUSE)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    m = MEDIAN.search(out)
    if not m:
        sys.exit(f"no median in the output of {' '.join(cmd)}:\n{out}")
    return float(m.group(1)), out


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main():
    global PAUSE
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--train", required=True, help="the gokeras train binary")
    p.add_argument("--python", default="/usr/bin/python3", help="a Python with torch")
    p.add_argument("--batch-sizes", default="32,256")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--verbose", action="store_true", help="print every run's median on standard error")
    p.add_argument("--pause", type=float, default=5.0,
                   help="seconds to rest before each run, so one run's heat and boost budget do not tax the next")
    a = p.parse_args()
    PAUSE = a.pause

    torch_version = subprocess.run([a.python, "-c", "import torch; print(torch.__version__)"],
                                   check=True, capture_output=True, text=True).stdout.strip()
    _, go_out = median_of([a.train, "--benchmark", "--device=/CPU:0", "--benchmark-steps", "3"])
    blas = next((l for l in go_out.splitlines() if l.startswith("BLAS:")), "BLAS: ?")
    print(f"machine: {cpu_name()}, {os.cpu_count()} cores; PyTorch {torch_version}; gokeras {blas}")
    print(f"{a.rounds} rounds of {a.steps} timed steps each (5 warm-up), PyTorch and gokeras alternating\n")
    print(f"{'batch':>5}  {'PyTorch ms/step':>15}  {'gokeras ms/step':>15}  {'speed-up':>8}  {'gokeras GFLOP/s':>15}  {'gokeras s/epoch':>15}")
    for batch in [int(b) for b in a.batch_sizes.split(",")]:
        torch_runs, go_runs = [], []
        for _ in range(a.rounds):
            tries = []
            for threads, extra in ((1, {}), (os.cpu_count(), {"OMP_WAIT_POLICY": "PASSIVE"})):
                env = dict(os.environ, **extra)
                ms, _ = median_of([a.python, os.path.join(HERE, "torch_mlp.py"), "--batch-size", str(batch),
                                   "--steps", str(a.steps), "--threads", str(threads)], env=env)
                tries.append(ms)
            torch_runs.append(min(tries))
            ms, _ = median_of([a.train, "--benchmark", "--device=/CPU:0", "--batch-size", str(batch),
                               "--benchmark-steps", str(a.steps), "--seed", "1"])
            go_runs.append(ms)
            if a.verbose:
                print(f"  batch {batch}: PyTorch {tries} ms/step (threads 1, {os.cpu_count()}), gokeras {ms} ms/step", file=sys.stderr)
        t, g = statistics.median(torch_runs), statistics.median(go_runs)
        steps = -(-50000 // batch)
        print(f"{batch:>5}  {t:>15.2f}  {g:>15.2f}  {t / g:>7.2f}x  {FLOPS_PER_SAMPLE * batch / g / 1e6:>15.1f}  {g * steps / 1e3:>15.1f}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
