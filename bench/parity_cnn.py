#!/usr/bin/env python3
"""Checks that gokeras trains the Keras cifar10_cnn as PyTorch does.

Reads what bench/cnnparity (go run ./bench/cnnparity --out DIR --trajectory)
wrote to DIR: the model's initial weights (initial.safetensors), the weights
after each step (steps/step-NNNN.safetensors, final.safetensors), the
synthetic images and one-hot labels (raw little-endian float32), one more
batch of images with gokeras' Predict outputs on it after the last step
(eval_images.f32, predict.f32), and run.json with the settings, the layers
and gokeras' loss at each step.

The result (PASS or FAIL, the exit status) is the re-synced check alone:
each step is run once in float32 PyTorch (bench/torch_cnn.py's model,
dropout rates 0, SGD) from gokeras' own weights before it, on the same
batch, and
  - its loss must match gokeras' loss for that step within --loss-tolerance
    (1e-5) relative;
  - every weight tensor after it (kernels, biases, BatchNormalization's
    gamma and beta) must match gokeras' within --weight-tolerance (0.05) of
    the step's largest change of that tensor: max|gokeras - PyTorch| <=
    0.05 * max|PyTorch after - before| (or one float32 ulp of the tensor's
    largest value, were the change that small). The bias of a convolution
    followed by BatchNormalization, which the loss does not depend on, is
    held to its kernel's change instead;
  - BatchNormalization's moving mean and variance after it (updated from
    the batch statistics) likewise, within --moving-tolerance (1e-3) of the
    step's largest change: no near-ties enter them, and both frameworks
    stay within 1e-5 of it from float64;
and, after the last step, PyTorch in eval mode (model.eval(): the moving
statistics) from gokeras' final weights must give gokeras' Predict outputs
on the extra batch within --eval-tolerance (1e-5): max|gokeras - PyTorch|
over the softmax outputs, which lie in [0, 1].
Each step starts from the same weights in both frameworks, so these compare
one step's arithmetic. The weights' tolerance is wide because of near-ties:
where a max-pooling window's two largest inputs, or a ReLU's input and 0,
differ by less than float32 rounding, two correct float32 implementations
route a gradient differently and a step's change of a convolution's weights
differs by up to 2.4e-2 of its largest entry (PyTorch float32 against
PyTorch float64, from the same weights; gokeras against either alike), while
away from near-ties they agree within 1e-3. The table prints PyTorch
float32 against float64 at each step beside gokeras; see
bench/results/cnn-parity-2026-11-23.txt.

Then, as information that does not change the result (--no-free-run skips
it), the free-running comparison: PyTorch trains all the steps from the
initial weights on its own, and its per-step losses are set beside
gokeras'; beside them, two float32 PyTorch runs against each other (oneDNN,
"mkldnn", off vs on: two sets of float32 convolution kernels), and each
against float64 PyTorch. Over 50 steps float32 trajectories drift apart
through near-ties in ReLU and max pooling, which turn rounding differences
of 1e-7 into loss differences of up to 1e-4, between any two float32
implementations: gokeras' free-running drift is to be read against
PyTorch's own.

Weight mapping: Conv2D kernels are Keras HWIO (kh, kw, in, out) and become
OIHW; Dense kernels (in, out) become Linear's (out, in). The Dense that
follows Flatten also has its input rows permuted, since Keras flattens
(H, W, C) and PyTorch's Flatten (C, H, W). "same" is padding 1 (3x3,
stride 1). BatchNormalization's gamma, beta, moving_mean and
moving_variance are BatchNorm2d's weight, bias, running_mean and
running_var (Keras' momentum 0.99 is PyTorch's momentum 0.01; both update
the moving variance with the unbiased batch variance). The safetensors
files are parsed here with json and struct (Debian has no safetensors
package).
"""
import argparse
import json
import os
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_cnn import VARIANTS, build_model  # noqa: E402

KERAS_TO_TORCH = {"Conv2D": torch.nn.Conv2d, "Dense": torch.nn.Linear, "BatchNormalization": torch.nn.BatchNorm2d}
ROLE = {"kernel": "weight", "bias": "bias",
        "gamma": "weight", "beta": "bias", "moving_mean": "running_mean", "moving_variance": "running_var"}
MOVING = ("moving_mean", "moving_variance")


def read_safetensors(path):
    """Returns {name: float32 ndarray} of a safetensors file."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        if t["dtype"] != "F32":
            raise SystemExit(f"{path}: {name} has dtype {t['dtype']}, want F32")
        b, e = t["data_offsets"]
        out[name] = np.frombuffer(data[b:e], dtype="<f4").reshape(t["shape"]).copy()
    return out


def to_torch(kind, name, w, flat):
    """Converts a gokeras weight to PyTorch's layout."""
    if w.ndim == 1:  # biases, gamma, beta, moving statistics
        return w
    if kind == "Conv2D":  # (kh, kw, in, out) -> (out, in, kh, kw)
        return w.transpose(3, 2, 0, 1)
    if flat is not None:  # rows (h, w, c) -> columns (c, h, w)
        c, h, wd = flat
        return w.reshape(h, wd, c, -1).transpose(3, 2, 0, 1).reshape(w.shape[1], c * h * wd)
    return w.T  # (in, out) -> (out, in)


def from_torch(kind, name, p, flat):
    """The inverse of to_torch: a PyTorch tensor in gokeras' layout."""
    if p.ndim == 1:
        return p
    if kind == "Conv2D":
        return p.transpose(2, 3, 1, 0)
    if flat is not None:
        c, h, wd = flat
        return p.reshape(-1, c, h, wd).transpose(2, 3, 1, 0).reshape(h * wd * c, p.shape[0])
    return p.T


class Twin:
    """bench/torch_cnn.py's model paired, layer by layer, with gokeras'."""

    def __init__(self, run, dtype=torch.float32):
        self.model = build_model(dropout=0, variant=run["variant"])
        keras = [l for l in run["layers"] if l["weights"]]
        mods = list(self.model)
        torch_layers = [m for m in mods if any(True for _ in m.parameters(recurse=False))]
        if len(keras) != len(torch_layers):
            raise SystemExit(f"gokeras has {len(keras)} layers with weights, the PyTorch model {len(torch_layers)}")
        for k, t in zip(keras, torch_layers):
            want = KERAS_TO_TORCH.get(k["type"])
            if want is None or not isinstance(t, want):
                raise SystemExit(f"gokeras layer {k['name']} ({k['type']}) pairs with PyTorch's {type(t).__name__}: no mapping")
        # The (C, H, W) shape each Flatten flattens, from a dummy forward
        # (in eval mode, which leaves BatchNorm2d's running statistics be).
        shapes = {}
        hooks = [m.register_forward_hook(lambda m, i, o: shapes.__setitem__(m, tuple(i[0].shape[1:]))) for m in mods]
        self.model.eval()
        with torch.no_grad():
            self.model(torch.zeros(1, run["image_shape"][2], *run["image_shape"][:2]))
        for h in hooks:
            h.remove()
        self.flat = {}
        for i, m in enumerate(mods):
            if isinstance(m, torch.nn.Linear) and i > 0 and isinstance(mods[i - 1], torch.nn.Flatten) \
                    and len(shapes[mods[i - 1]]) == 3:
                self.flat[m] = shapes[mods[i - 1]]
        self.pairs = list(zip(keras, torch_layers))
        # The biases the loss does not depend on: those of a layer whose
        # output goes straight into a BatchNorm2d, which subtracts the
        # channel's batch mean again (in training; in eval mode the moving
        # mean, so they do reach Predict's outputs, by as much as they are
        # large). Their gradient is zero in exact arithmetic: each
        # framework updates them by rounding noise only.
        self.inert = {}  # bias name -> the same layer's kernel name
        for k, t in self.pairs:
            i = mods.index(t)
            if i + 1 < len(mods) and isinstance(mods[i + 1], torch.nn.BatchNorm2d):
                names = {w["name"].split("/")[-1]: w["name"] for w in k["weights"]}
                if "bias" in names and "kernel" in names:
                    self.inert[names["bias"]] = names["kernel"]
        self.model.to(dtype).train()
        self.dtype = dtype

    def tensors(self):
        """Yields (gokeras layer type, gokeras weight name, PyTorch parameter
        or running-statistics buffer, flatten shape)."""
        for k, t in self.pairs:
            tt = dict(t.named_parameters(recurse=False))
            tt.update(t.named_buffers(recurse=False))
            for w in k["weights"]:
                yield k["type"], w["name"], tt[ROLE[w["name"].split("/")[-1]]], self.flat.get(t)

    def load(self, weights):
        """Sets the model's weights from a gokeras {name: ndarray}."""
        n = 0
        with torch.no_grad():
            for kind, name, p, flat in self.tensors():
                v = to_torch(kind, name, weights[name], flat)
                if tuple(v.shape) != tuple(p.shape):
                    raise SystemExit(f"{name} {weights[name].shape} maps to {v.shape}, PyTorch wants {tuple(p.shape)}")
                p.copy_(torch.from_numpy(np.ascontiguousarray(v)))
                n += 1
        have = sum(1 for _ in self.model.parameters()) + sum(
            1 for b, _ in self.model.named_buffers() if b.endswith(("running_mean", "running_var")))
        if n != len(weights) or n != have:
            raise SystemExit(f"loaded {n} tensors; the file has {len(weights)}, the model {have}")

    def weights(self):
        """The model's weights as gokeras lays them out, float64."""
        return {name: from_torch(kind, name, p.detach().double().numpy(), flat) for kind, name, p, flat in self.tensors()}

    def train(self, batches, lr):
        """SGD steps on the batches; returns each step's loss."""
        self.model.train()
        opt = torch.optim.SGD(self.model.parameters(), lr=lr)
        losses = []
        for x, y in batches:
            x, y = x.to(self.dtype), y.to(self.dtype)
            # Keras' categorical cross-entropy from the logits, batch mean.
            loss = -(y * F.log_softmax(self.model(x), dim=1)).sum(1).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses

    def predict(self, x):
        """Softmax outputs in eval mode (BatchNorm2d on its running statistics)."""
        self.model.eval()
        with torch.no_grad():
            return torch.softmax(self.model(x.to(self.dtype)), dim=1).double().numpy()


def rel(a, b):
    return abs(a - b) / abs(b)


EPS32 = 2.0 ** -23  # float32's spacing at 1: one ulp of a value below 2 is at most EPS32


def step_diff(got, want, before, tol):
    """Compares one tensor after a step: returns (max|got - want| over the
    step's largest change max|want - before|, passes), where passing is
    max|got - want| <= max(tol * max|want - before|, EPS32 * max|want|),
    the floor being one float32 ulp of the tensor's largest value (the
    rounding of w + update alone, were the update tiny)."""
    d = float(np.max(np.abs(got.astype(np.float64) - want)))
    upd = float(np.max(np.abs(want - before)))
    ok = d <= max(tol * upd, EPS32 * float(np.max(np.abs(want))))
    return (d / upd if upd > 0 else (0.0 if d == 0 else float("inf"))), ok


def scaled(got, want, scale=None):
    """max|got - want| / max|scale| (scale: want unless given) over one tensor."""
    d = float(np.max(np.abs(got.astype(np.float64) - want)))
    m = float(np.max(np.abs(want if scale is None else scale)))
    return d / m if m > 0 else (0.0 if d == 0 else float("inf"))


def is_moving(name):
    return name.split("/")[-1] in MOVING


def worst_of(v):
    """(index, value) of the largest of v, NaN counting as largest."""
    j = max(range(len(v)), key=lambda i: v[i] if v[i] == v[i] else float("inf"))
    return j, v[j]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir", help="the directory bench/cnnparity --trajectory wrote")
    p.add_argument("--loss-tolerance", type=float, default=1e-5,
                   help="largest relative difference of a re-synced step's loss (default 1e-5)")
    p.add_argument("--weight-tolerance", type=float, default=0.05,
                   help="largest max|diff| of a weight or moving-statistics tensor after a re-synced step, "
                        "as a fraction of the step's largest change of it (default 0.05)")
    p.add_argument("--moving-tolerance", type=float, default=1e-3,
                   help="the same for BatchNormalization's moving mean and variance (default 1e-3)")
    p.add_argument("--eval-tolerance", type=float, default=1e-5,
                   help="largest |diff| of an eval-mode softmax output (default 1e-5)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--no-free-run", action="store_true", help="only the re-synced check, which sets the exit status")
    a = p.parse_args()
    torch.set_num_threads(a.threads)

    with open(os.path.join(a.dir, "run.json")) as f:
        run = json.load(f)
    if run["variant"] not in VARIANTS:
        raise SystemExit(f"variant {run['variant']!r}: parity_cnn.py knows only {', '.join(VARIANTS)}")
    if not run.get("trajectory"):
        print(f"parity_cnn.py: {a.dir} has no per-step weights: the re-synced check, which decides the result, "
              f"needs them (go run ./bench/cnnparity --trajectory)", file=sys.stderr)
        sys.exit(2)
    steps, batch, lr, n = run["steps"], run["batch_size"], run["learning_rate"], run["samples"]
    hh, ww, cc = run["image_shape"]
    classes = run["classes"]
    images = np.fromfile(os.path.join(a.dir, "images.f32"), dtype="<f4")
    labels = np.fromfile(os.path.join(a.dir, "labels.f32"), dtype="<f4")
    if images.size != n * hh * ww * cc or labels.size != n * classes or n < steps * batch:
        raise SystemExit(f"images.f32 / labels.f32 hold {images.size} / {labels.size} values, "
                         f"want {n * hh * ww * cc} / {n * classes} for {steps} batches of {batch}")
    x_all = torch.from_numpy(images.reshape(n, hh, ww, cc)).permute(0, 3, 1, 2).contiguous()  # NHWC -> NCHW
    y_all = torch.from_numpy(labels.reshape(n, classes))
    batches = [(x_all[s * batch:(s + 1) * batch], y_all[s * batch:(s + 1) * batch]) for s in range(steps)]
    ne = run["eval_samples"]
    x_eval = torch.from_numpy(np.fromfile(os.path.join(a.dir, "eval_images.f32"), dtype="<f4")
                              .reshape(ne, hh, ww, cc)).permute(0, 3, 1, 2).contiguous()
    p_go = np.fromfile(os.path.join(a.dir, "predict.f32"), dtype="<f4").reshape(ne, classes)
    initial = read_safetensors(os.path.join(a.dir, "initial.safetensors"))
    final_go = read_safetensors(os.path.join(a.dir, "final.safetensors"))
    go = run["losses"]
    after_go = [read_safetensors(os.path.join(a.dir, "steps", f"step-{s + 1:04d}.safetensors"))
                for s in range(steps - 1)] + [final_go]
    moving = [k for k in initial if is_moving(k)]
    inert = Twin(run).inert
    trainable = [k for k in initial if not is_moving(k)]

    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), oneDNN (mkldnn) "
          f"{'available' if torch.backends.mkldnn.is_available() else 'absent'}; variant {run['variant']} "
          f"({len(trainable)} weight tensors, {len(moving)} moving-statistics tensors); "
          f"{steps} SGD steps (lr {lr}) of batch {batch}, dropout 0, no shuffle")
    print(f"gokeras per-step loss: {run.get('loss_method', '?')}")

    # The re-synced check: each step from gokeras' weights before it, in
    # PyTorch float32 (the reference) and, as information, float64.
    tol = a.weight_tolerance
    rs = []  # per step: dict of the figures below
    prev = initial
    for s in range(steps):
        t32, t64 = Twin(run), Twin(run, torch.float64)
        t32.load(prev)
        t64.load(prev)
        loss32 = t32.train(batches[s:s + 1], lr)[0]
        loss64 = t64.train(batches[s:s + 1], lr)[0]
        after, w32, w64 = after_go[s], t32.weights(), t64.weights()
        r = {"loss": loss32, "loss64": loss64, "w": [], "m": [], "pt": [], "bad": [], "scaled": []}
        for k in after:
            if k in inert:
                # The loss does not depend on it (see Twin.inert): against
                # its layer's kernel's change.
                kk = inert[k]
                d = float(np.max(np.abs(after[k].astype(np.float64) - w32[k])))
                upd = float(np.max(np.abs(w32[kk] - prev[kk])))
                e, ok = d / upd, d <= tol * upd
            else:
                e, ok = step_diff(after[k], w32[k], prev[k], a.moving_tolerance if is_moving(k) else tol)
                r["pt"].append((step_diff(w32[k], w64[k], prev[k], tol)[0], k))
                r["scaled"].append((scaled(after[k], w32[k]), k))
            r["m" if is_moving(k) else "w"].append((e, k))
            if not ok:
                r["bad"].append(k)
        for key in ("w", "m", "pt", "scaled"):
            r[key] = max(r[key]) if r[key] else None
        rs.append(r)
        prev = after
    t = Twin(run)
    t.load(final_go)
    p_pt = t.predict(x_eval)
    ev_abs = float(np.max(np.abs(p_go - p_pt)))
    ev_rel = float(np.max(np.abs(p_go - p_pt) / np.abs(p_pt)))
    ev_arg = float((p_go.argmax(1) == p_pt.argmax(1)).mean())

    rs_rel = [rel(g, r["loss"]) for g, r in zip(go, rs)]
    bn = ", BatchNormalization's gamma, beta" if moving else ""
    print()
    print("RE-SYNCED CHECK (decides PASS/FAIL): each step run once in float32 PyTorch from gokeras' weights before it, "
          "on the same batch")
    print(f"  loss rel. = |gokeras - PyTorch| / |PyTorch| of the step's loss; tolerance {a.loss_tolerance:g}")
    print(f"  weights = per tensor (kernels, biases{bn}), max|gokeras - PyTorch| after the step over the step's largest "
          f"change max|PyTorch after - before|, worst tensor; tolerance {tol:g} (or one float32 ulp of max|w|)")
    for b, k in inert.items():
        print(f"    {b}: the next layer is a BatchNormalization, so the loss does not depend on it (its gradient is zero in "
              f"exact arithmetic and both frameworks move it by rounding noise only): taken over the change of {k}")
    if moving:
        print(f"  moving stats = the same for moving_mean, moving_variance (BatchNorm2d running_mean, running_var); "
              f"tolerance {a.moving_tolerance:g}")
    print("  PT f32 vs f64 = (information) the same figure between PyTorch float32 and PyTorch float64 steps from the "
          "same weights: PyTorch's own float32 error at that step, large where near-ties in ReLU or max pooling are "
          "resolved differently")
    head = f"{'step':>4}  {'gokeras':>11}  {'PyTorch':>11}  {'loss rel.':>9}  {'weights':>8}  {'(worst tensor)':<26}"
    if moving:
        head += f"  {'moving stats':>12}  {'(worst tensor)':<36}"
    head += f"  {'PT f32 vs f64':>13}  {'(worst tensor)':<26}"
    print(head)
    for i, r in enumerate(rs):
        line = f"{i + 1:>4}  {go[i]:>11.8f}  {r['loss']:>11.8f}  {rs_rel[i]:>9.2e}  {r['w'][0]:>8.2e}  {r['w'][1]:<26}"
        if moving:
            line += f"  {r['m'][0]:>12.2e}  {r['m'][1]:<36}"
        line += f"  {r['pt'][0]:>13.2e}  {r['pt'][1]:<26}"
        if r["bad"]:
            line += "  beyond tolerance: " + ", ".join(r["bad"])
        print(line.rstrip())

    checks = []
    j, v = worst_of(rs_rel)
    checks.append((f"loss of each step: worst relative difference {v:.2e} at step {j + 1} "
                   f"(gokeras {go[j]:.9f}, PyTorch {rs[j]['loss']:.9f}); tolerance {a.loss_tolerance:g}",
                   all(d <= a.loss_tolerance for d in rs_rel)))
    bad_w = [(i + 1, k) for i, r in enumerate(rs) for k in r["bad"] if not is_moving(k)]
    j, _ = worst_of([r["w"][0] for r in rs])
    js, _ = worst_of([r["scaled"][0] for r in rs])
    jp, _ = worst_of([r["pt"][0] for r in rs])
    checks.append((f"weights after each step: worst {rs[j]['w'][0]:.2e} of the step's largest change ({rs[j]['w'][1]}, "
                   f"step {j + 1}); tolerance {tol:g}; PyTorch float32 vs float64 reach {rs[jp]['pt'][0]:.2e} "
                   f"({rs[jp]['pt'][1]}, step {jp + 1}); median over the steps {np.median([r['w'][0] for r in rs]):.2e} "
                   f"(PyTorch float32 vs float64 {np.median([r['pt'][0] for r in rs]):.2e}); as a fraction of max|w| instead, worst "
                   f"{rs[js]['scaled'][0]:.2e} ({rs[js]['scaled'][1]}, step {js + 1})"
                   + (f"; beyond tolerance: {bad_w}" if bad_w else ""), not bad_w))
    if moving:
        bad_m = [(i + 1, k) for i, r in enumerate(rs) for k in r["bad"] if is_moving(k)]
        j, _ = worst_of([r["m"][0] for r in rs])
        checks.append((f"moving statistics after each step: worst {rs[j]['m'][0]:.2e} of the step's largest change "
                       f"({rs[j]['m'][1]}, step {j + 1}); tolerance {a.moving_tolerance:g}"
                       + (f"; beyond tolerance: {bad_m}" if bad_m else ""), not bad_m))
    checks.append((f"eval mode after step {steps} (gokeras Predict vs PyTorch model.eval() from gokeras' final weights, "
                   f"{ne} new images x {classes} softmax outputs): worst |diff| {ev_abs:.2e} (relative {ev_rel:.2e}, "
                   f"same argmax for {ev_arg:.0%}); tolerance {a.eval_tolerance:g}", ev_abs <= a.eval_tolerance))

    if not a.no_free_run:
        free_run(run, initial, final_go, batches, go, lr, steps, inert)

    ok = all(c for _, c in checks)
    print()
    print(f"RESULT of the re-synced check only (the free-running drift is information), variant {run['variant']}:")
    for what, c in checks:
        print(f"  {'pass' if c else 'FAIL'}  {what}")
    print(f"{'PASS' if ok else 'FAIL'}: variant {run['variant']}, re-synced check over {steps} steps")
    sys.exit(0 if ok else 1)


def free_run(run, initial, final_go, batches, go, lr, steps, inert):
    """Prints the free-running comparison and PyTorch's own drift."""
    twin = Twin(run)
    twin.load(initial)
    pt = twin.train(batches, lr)
    final_pt = twin.weights()
    mk = torch.backends.mkldnn.enabled
    torch.backends.mkldnn.enabled = False
    try:
        t = Twin(run)
        t.load(initial)
        pt_nomk = t.train(batches, lr)
    finally:
        torch.backends.mkldnn.enabled = mk
    t = Twin(run, torch.float64)
    t.load(initial)
    pt64 = t.train(batches, lr)
    cols = {
        "gokeras vs PT": [rel(x, y) for x, y in zip(go, pt)],
        "PT no-oneDNN vs PT": [rel(x, y) for x, y in zip(pt_nomk, pt)],
        "gokeras vs PT f64": [rel(x, y) for x, y in zip(go, pt64)],
        "PT vs PT f64": [rel(x, y) for x, y in zip(pt, pt64)],
    }
    print()
    print(f"FREE-RUNNING (information, does not change the result): each framework trains all {steps} steps from "
          f"the initial weights on its own; relative loss differences; PT is PyTorch float32 with oneDNN (its default)")
    print(f"{'step':>4}  {'gokeras':>11}  {'PyTorch':>11}" + "".join(f"  {c:>18}" for c in cols))
    for i in range(steps):
        print(f"{i + 1:>4}  {go[i]:>11.8f}  {pt[i]:>11.8f}" + "".join(f"  {cols[c][i]:>18.2e}" for c in cols))
    what = {
        "gokeras vs PT": "gokeras vs PyTorch float32",
        "PT no-oneDNN vs PT": "PyTorch float32 oneDNN off vs on (PyTorch vs itself)",
        "gokeras vs PT f64": "gokeras vs PyTorch float64",
        "PT vs PT f64": "PyTorch float32 vs PyTorch float64",
    }
    for c, v in cols.items():
        j, _ = worst_of(v)
        print(f"  {what[c]}: worst {v[j]:.2e} at step {j + 1} (steps 1-10: {max(v[:10]):.2e})")
    wworst, wname = max((scaled(final_go[k], final_pt[k]), k) for k in final_go if k not in inert)
    print(f"  weights after {steps} steps, gokeras vs PyTorch float32: worst max|diff| / max|w| {wworst:.2e} ({wname})"
          + "".join(f"; {b}, which the loss does not depend on: {scaled(final_go[b], final_pt[b], final_pt[k]):.2e} "
                    f"of max|{k}| (max|{b}| {float(np.max(np.abs(final_go[b]))):.1e} in gokeras, "
                    f"{float(np.max(np.abs(final_pt[b]))):.1e} in PyTorch)" for b, k in inert.items()))
    g, b = max(cols["gokeras vs PT"]), max(cols["PT no-oneDNN vs PT"])
    b64 = max(cols["PT vs PT f64"])
    print(f"  free-running loss drift: gokeras vs PyTorch {g:.2e}; PyTorch vs itself (oneDNN off vs on) {b:.2e}, "
          f"PyTorch float32 vs float64 {b64:.2e}"
          + (f": gokeras' drift is {g / b:.2f}x PyTorch's own (oneDNN off vs on)" if b > 0 else ""))


if __name__ == "__main__":
    main()
