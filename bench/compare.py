#!/usr/bin/env python3
"""Times the CIFAR-10 MLP's (or, with --model cnn, the Keras cifar10_cnn's;
with --model resnet20, ResNet-20's) training step in PyTorch and in gokeras,
side by side.

--optimizers sgd,momentum,adam times each optimizer (momentum: SGD with
momentum 0.9; also adamw, rmsprop, adagrad, adadelta, adamax, nadam; Keras'
default settings on both sides, see torch_mlp.py's OPTIMIZERS).

Runs bench/torch_mlp.py and `train --benchmark` (a prebuilt binary), or
with --model cnn bench/torch_cnn.py and `train --benchmark --model cnn`, in
alternation, a few rounds per batch size and device, and prints the median
of each one's medians, their ratio, and with --devices cuda,cpu how much
faster each framework is on the GPU than on the CPU.

On the CPU, PyTorch gets its fastest thread setting on the machine: one
intra-op thread (its BLAS still uses every core) or all cores with passive
OpenMP waiting; both are tried each round. On the GPU (--devices cuda, which
needs a train built with -tags cudavm: scripts/build-cuda.sh --bin bin),
gokeras runs with --device=/GPU:0 and PyTorch eager on cuda:0 with TF32 off
(--tf32 allows it in PyTorch only; gokeras's cuBLAS SGEMM is always FP32).
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
MEDIAN = re.compile(r"median (\d+\.\d+) ms/(?:step|batch)")


def training_flops(products):
    """Arithmetic of one training step per sample, given each layer's
    forward product (M, K, N) for one sample, 2·M·K·N: the forward
    product, the weight gradient and, but for the first layer (whose input
    needs no gradient), the input gradient, each as large."""
    return sum((2 if i == 0 else 3) * 2 * m * k * n for i, (m, k, n) in enumerate(products))


# Arithmetic of one step of the MLP per sample: two products for the
# first layer (its input needs no gradient), three for the others.
FLOPS_PER_SAMPLE = 2 * (2 * 3072 * 3000 + 3 * 3000 * 1000 + 3 * 1000 * 10)
assert FLOPS_PER_SAMPLE == training_flops([(1, 3072, 3000), (1, 3000, 1000), (1, 1000, 10)])
# The cifar10_cnn per sample, its convolutions as im2col products (output
# positions x kh·kw·cin x cout): conv 32 same on 32x32, conv 32 valid on
# 32x32 (30x30 out), pool to 15x15, conv 64 same, conv 64 valid (13x13 out),
# pool to 6x6, Dense(2304, 512), Dense(512, 10): 122,677,248 FLOPs.
CNN_PRODUCTS = [
    (32 * 32, 3 * 3 * 3, 32), (30 * 30, 3 * 3 * 32, 32),
    (15 * 15, 3 * 3 * 32, 64), (13 * 13, 3 * 3 * 64, 64),
    (1, 6 * 6 * 64, 512), (1, 512, 10),
]
CNN_FLOPS_PER_SAMPLE = training_flops(CNN_PRODUCTS)
# ResNet-20 (Keras' cifar10_resnet v1) per sample: its 21 convolutions as
# im2col products, the two 1x1 shortcut projections included, and the
# Dense(64, 10): 243,994,368 FLOPs.
RESNET20_PRODUCTS = (
    [(32 * 32, 3 * 3 * 3, 16)] + [(32 * 32, 3 * 3 * 16, 16)] * 6 +
    [(16 * 16, 3 * 3 * 16, 32), (16 * 16, 3 * 3 * 32, 32), (16 * 16, 16, 32)] + [(16 * 16, 3 * 3 * 32, 32)] * 4 +
    [(8 * 8, 3 * 3 * 32, 64), (8 * 8, 3 * 3 * 64, 64), (8 * 8, 32, 64)] + [(8 * 8, 3 * 3 * 64, 64)] * 4 +
    [(1, 64, 10)])
RESNET20_FLOPS_PER_SAMPLE = training_flops(RESNET20_PRODUCTS)
MLP_PRODUCTS = [(1, 3072, 3000), (1, 3000, 1000), (1, 1000, 10)]


def forward_flops(products):
    """Arithmetic of one inference (forward) pass per sample: each layer's
    forward product, 2·M·K·N."""
    return sum(2 * m * k * n for m, k, n in products)


# FLOPs per sample of a training step and of an inference pass.
FLOPS = {"mlp": (FLOPS_PER_SAMPLE, forward_flops(MLP_PRODUCTS)),
         "cnn": (CNN_FLOPS_PER_SAMPLE, forward_flops(CNN_PRODUCTS)),
         "resnet20": (RESNET20_FLOPS_PER_SAMPLE, forward_flops(RESNET20_PRODUCTS))}
# What each --model times: the PyTorch twin, the extra train flags, the
# FLOPs, and the twin's settings tried each round besides the thread
# settings (its fastest counts): ResNet-20 in PyTorch's default memory
# layout and channels-last.
MODELS = {
    "mlp": ("torch_mlp.py", [], FLOPS_PER_SAMPLE, [[]]),
    "cnn": ("torch_cnn.py", ["--model", "cnn"], CNN_FLOPS_PER_SAMPLE, [[]]),
    "resnet20": ("torch_resnet.py", ["--model", "resnet20"], RESNET20_FLOPS_PER_SAMPLE, [[], ["--channels-last"]]),
}
EPOCH = 50000  # samples of a CIFAR-10 training epoch
GO_DEVICE = {"cpu": "/CPU:0", "cuda": "/GPU:0"}
LABEL = {"cpu": "CPU", "cuda": "GPU"}

PAUSE = 5.0  # seconds of rest before each run, set by --pause


def run(cmd, env=None):
    """Runs cmd and returns its standard output; exits with its output if it fails."""
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed with status {p.returncode}:\n{p.stdout}{p.stderr}")
    return p.stdout


def median_of(cmd, env=None):
    time.sleep(PAUSE)
    out = run(cmd, env)
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


GO_OPTIMIZER = {"sgd": ["--optimizer", "sgd"], "momentum": ["--optimizer", "sgd", "--momentum", "0.9"],
                **{o: ["--optimizer", o] for o in ("adam", "adamw", "rmsprop", "adagrad", "adadelta", "adamax", "nadam")}}

# Variables some machines set for old OpenBLAS builds; they slow PyTorch's
# OpenBLAS, so its runs go without them (gokeras keeps the environment).
TORCH_UNSET = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def torch_cmd(a, device, batch, threads, steps=None, warmup=None, optimizer="sgd", extra=()):
    cmd = [a.python, os.path.join(HERE, MODELS[a.model][0]), "--device", device, "--batch-size", str(batch),
           "--steps", str(steps or a.steps), "--warmup", str(a.warmup if warmup is None else warmup),
           "--threads", str(threads), "--optimizer", optimizer] + list(extra) + (["--inference"] if a.inference else [])
    return cmd + ["--tf32"] if a.tf32 and device == "cuda" else cmd


def go_cmd(a, device, batch, steps=None, warmup=None, optimizer="sgd"):
    return [a.train, "--benchmark", f"--device={GO_DEVICE[device]}", "--batch-size", str(batch),
            "--benchmark-steps", str(steps or a.steps),
            "--benchmark-warmup", str(a.warmup if warmup is None else warmup), "--seed", "1"] + MODELS[a.model][1] + \
        GO_OPTIMIZER[optimizer] + (["--benchmark-inference"] if a.inference else [])


def torch_env(extra):
    env = {k: v for k, v in os.environ.items() if k not in TORCH_UNSET}
    env.update(extra)
    return env


def time_pair(a, device, batch, optimizer="sgd"):
    """One round: PyTorch's best thread setting, then gokeras, in ms/step."""
    tries = []
    settings = ((1, {}), (os.cpu_count(), {"OMP_WAIT_POLICY": "PASSIVE"})) if device == "cpu" else ((os.cpu_count(), {}),)
    names = []
    for threads, extra in settings:
        for args in MODELS[a.model][3]:
            ms, _ = median_of(torch_cmd(a, device, batch, threads, optimizer=optimizer, extra=args), env=torch_env(extra))
            tries.append(ms)
            names.append(" ".join([f"{threads} thread(s)"] + args))
    ms, _ = median_of(go_cmd(a, device, batch, optimizer=optimizer))
    if a.verbose:
        print(f"  {LABEL[device]} batch {batch} {optimizer}: PyTorch {tries} ms/{'batch' if a.inference else 'step'} "
              f"({', '.join(names)}), gokeras {ms} ms/{'batch' if a.inference else 'step'}", file=sys.stderr)
    return min(tries), ms


def main():
    global PAUSE
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--train", required=True, help="the gokeras train binary")
    p.add_argument("--python", default="/usr/bin/python3", help="a Python with torch")
    p.add_argument("--model", choices=tuple(MODELS), default="mlp",
                   help="mlp (bench/torch_mlp.py, train --benchmark), cnn, the Keras cifar10_cnn "
                        "(bench/torch_cnn.py, train --benchmark --model cnn), or resnet20, Keras' cifar10_resnet "
                        "ResNet v1 (bench/torch_resnet.py, train --benchmark --model resnet20)")
    p.add_argument("--devices", default="cpu", help="cpu, cuda, or both: cuda,cpu")
    p.add_argument("--batch-sizes", default="32,256")
    p.add_argument("--optimizers", default="sgd", help="any of " + ", ".join(GO_OPTIMIZER) + ", comma-separated")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--warmup", type=int, default=5, help="untimed steps before the timed ones, each run")
    p.add_argument("--inference", action="store_true",
                   help="time inference instead of training steps: train --benchmark --benchmark-inference (Predict, one "
                        "batch at a time) against the twin's --inference (eval mode, torch.no_grad()); ms/batch")
    p.add_argument("--tf32", action="store_true", help="allow TF32 in PyTorch on cuda (reported; gokeras stays FP32)")
    p.add_argument("--verbose", action="store_true", help="print every run's median on standard error")
    p.add_argument("--pause", type=float, default=5.0,
                   help="seconds to rest before each run, so one run's heat and boost budget do not tax the next")
    a = p.parse_args()
    PAUSE = a.pause
    devices = [d.strip() for d in a.devices.split(",") if d.strip()]
    if not devices or any(d not in GO_DEVICE for d in devices) or len(set(devices)) != len(devices):
        p.error(f"--devices: want cpu, cuda or both (comma-separated), got {a.devices!r}")
    batches = [int(b) for b in a.batch_sizes.split(",")]
    optimizers = [o.strip() for o in a.optimizers.split(",") if o.strip()]
    if not optimizers or any(o not in GO_OPTIMIZER for o in optimizers):
        p.error(f"--optimizers: want any of {', '.join(GO_OPTIMIZER)}, got {a.optimizers!r}")
    if a.rounds <= 0 or a.steps <= 0 or a.warmup < 0 or any(b <= 0 for b in batches):
        p.error("--rounds, --steps and the batch sizes must be positive, --warmup not negative")

    if a.model != "mlp" and "--model" not in run([a.train, "--help"]):
        sys.exit(f"{a.train} has no --model flag: rebuild it from a checkout whose cmd/train has --model {a.model}")
    flops = FLOPS[a.model][1 if a.inference else 0]
    if a.inference and a.model == "mlp":
        p.error("--inference: the MLP twin (bench/torch_mlp.py) has no inference mode; use --model cnn or resnet20")

    # One short run per device first: it fails fast on a train built without
    # CUDA or a torch without it, and names what computes the products.
    torch_version = run([a.python, "-c", "import torch; print(torch.__version__)"]).strip()
    print(f"machine: {cpu_name()}, {os.cpu_count()} cores; PyTorch {torch_version}; train {a.train}")
    for d in devices:
        go_out = run(go_cmd(a, d, 32, steps=1, warmup=0))
        if d == "cpu":
            blas = next((l for l in go_out.splitlines() if l.startswith("BLAS:")), "BLAS: ?")
            print(f"CPU: gokeras {blas}")
        else:
            first = run(torch_cmd(a, d, 32, os.cpu_count(), steps=1, warmup=0)).splitlines()[0]
            print(f"GPU: {first.split(', ', 1)[-1]} in PyTorch; gokeras: cuBLAS SGEMM in FP32, no TF32")
    unit = "batch" if a.inference else "step"
    what = "inference pass (forward products)" if a.inference else "training step"
    print(f"model: {a.model}, {flops / 1e6:.1f} MFLOP per sample per {what}")
    units = "batches" if a.inference else "steps"
    print(f"{a.rounds} rounds of {a.steps} timed {units} each ({a.warmup} warm-up), PyTorch and gokeras alternating; "
          f"s/epoch = median x the {units} of a {EPOCH}-sample epoch\n")
    print(f"{'device':<6}  {'optimizer':<9}  {'batch':>5}  {'PyTorch ms/' + unit:>16}  {'gokeras ms/' + unit:>16}  {'speed-up':>8}  "
          f"{'gokeras GFLOP/s':>15}  {'PyTorch s/epoch':>15}  {'gokeras s/epoch':>15}")
    sys.stdout.flush()
    results = {}
    for batch in batches:
        steps = -(-EPOCH // batch)
        for opt in optimizers:
            for d in devices:
                runs = [time_pair(a, d, batch, opt) for _ in range(a.rounds)]
                t = statistics.median(r[0] for r in runs)
                g = statistics.median(r[1] for r in runs)
                results[d, batch, opt] = t, g
                print(f"{LABEL[d]:<6}  {opt:<9}  {batch:>5}  {t:>16.2f}  {g:>16.2f}  {t / g:>7.2f}x  "
                      f"{flops * batch / g / 1e6:>15.1f}  {t * steps / 1e3:>15.2f}  {g * steps / 1e3:>15.2f}")
                sys.stdout.flush()
    if len(devices) == 2:
        print(f"\nGPU vs CPU speed-up (CPU ms/step / GPU ms/step)\n{'optimizer':<9}  {'batch':>5}  {'PyTorch':>8}  {'gokeras':>8}")
        for batch in batches:
            for opt in optimizers:
                (tc, gc), (tg, gg) = results["cpu", batch, opt], results["cuda", batch, opt]
                print(f"{opt:<9}  {batch:>5}  {tc / tg:>7.1f}x  {gc / gg:>7.1f}x")


if __name__ == "__main__":
    main()
