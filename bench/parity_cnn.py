#!/usr/bin/env python3
"""Checks that gokeras trains the Keras cifar10_cnn as PyTorch does.

Reads what bench/cnnparity (go run ./bench/cnnparity --out DIR) wrote to DIR:
the model's initial weights (initial.safetensors), the synthetic images and
one-hot labels (raw little-endian float32), and run.json with the settings,
the layers and gokeras' loss at each step. Loads the weights into
bench/torch_cnn.py's model (dropout rates 0, as in the Go program), trains
the same steps in float32 PyTorch on the same batches in the same order with
SGD, and compares the per-step losses: it exits 1 if any relative
difference |gokeras - PyTorch| / |PyTorch| exceeds --tolerance (1e-5),
printing the worst.

Unless --no-diagnostics is given it also prints, per step, what bounds such
a comparison (none of it changes the exit status):
  - PyTorch float32 again with oneDNN (mkldnn) off, another set of float32
    convolution kernels: how far two float32 PyTorch runs drift apart;
  - PyTorch float64 from the same weights: how far each float32 run is from
    the exact trajectory;
  - with the Go program's --trajectory (DIR/steps/step-NNNN.safetensors,
    the weights after each step), each step run in float32 PyTorch from
    gokeras' own weights before it ("re-synced"): that step's loss, and the
    weights one step later against gokeras'.

Weight mapping: Conv2D kernels are Keras HWIO (kh, kw, in, out) and become
OIHW; Dense kernels (in, out) become Linear's (out, in). The Dense that
follows Flatten also has its input rows permuted, since Keras flattens
(H, W, C) and PyTorch's Flatten (C, H, W). "same" is padding 1 (3x3,
stride 1). The safetensors files are parsed here with json and struct
(Debian has no safetensors package).
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
from torch_cnn import build_model  # noqa: E402

VARIANTS = ("plain",)
KERAS_TO_TORCH = {"Conv2D": torch.nn.Conv2d, "Dense": torch.nn.Linear}
ROLE = {"kernel": "weight", "bias": "bias"}


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
    if name.endswith("/bias"):
        return w
    if kind == "Conv2D":  # (kh, kw, in, out) -> (out, in, kh, kw)
        return w.transpose(3, 2, 0, 1)
    if flat is not None:  # rows (h, w, c) -> columns (c, h, w)
        c, h, wd = flat
        return w.reshape(h, wd, c, -1).transpose(3, 2, 0, 1).reshape(w.shape[1], c * h * wd)
    return w.T  # (in, out) -> (out, in)


def from_torch(kind, name, p, flat):
    """The inverse of to_torch: a PyTorch parameter in gokeras' layout."""
    if name.endswith("/bias"):
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
        # The (C, H, W) shape each Flatten flattens, from a dummy forward.
        shapes = {}
        hooks = [m.register_forward_hook(lambda m, i, o: shapes.__setitem__(m, tuple(i[0].shape[1:]))) for m in mods]
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
        self.model.to(dtype).train()
        self.dtype = dtype

    def params(self):
        """Yields (gokeras layer type, gokeras weight name, PyTorch parameter, flatten shape)."""
        for k, t in self.pairs:
            tparams = dict(t.named_parameters(recurse=False))
            for w in k["weights"]:
                yield k["type"], w["name"], tparams[ROLE[w["name"].split("/")[-1]]], self.flat.get(t)

    def load(self, weights):
        """Sets the model's weights from a gokeras {name: ndarray}."""
        n = 0
        with torch.no_grad():
            for kind, name, p, flat in self.params():
                v = to_torch(kind, name, weights[name], flat)
                if tuple(v.shape) != tuple(p.shape):
                    raise SystemExit(f"{name} {weights[name].shape} maps to {v.shape}, PyTorch wants {tuple(p.shape)}")
                p.copy_(torch.from_numpy(np.ascontiguousarray(v)))
                n += 1
        if n != len(weights) or n != sum(1 for _ in self.model.parameters()):
            raise SystemExit(f"loaded {n} tensors; the file has {len(weights)}, the model {sum(1 for _ in self.model.parameters())}")

    def weights(self):
        """The model's weights as gokeras lays them out, float64."""
        return {name: from_torch(kind, name, p.detach().double().numpy(), flat) for kind, name, p, flat in self.params()}

    def train(self, batches, lr):
        """SGD steps on the batches; returns each step's loss."""
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


def rel(a, b):
    return abs(a - b) / abs(b)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir", help="the directory bench/cnnparity wrote")
    p.add_argument("--tolerance", type=float, default=1e-5, help="largest relative loss difference allowed (default 1e-5)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--no-diagnostics", action="store_true", help="only the float32 comparison that sets the exit status")
    a = p.parse_args()
    torch.set_num_threads(a.threads)

    with open(os.path.join(a.dir, "run.json")) as f:
        run = json.load(f)
    if run["variant"] not in VARIANTS:
        raise SystemExit(f"variant {run['variant']!r}: parity_cnn.py knows only {', '.join(VARIANTS)}")
    steps, batch, lr, n = run["steps"], run["batch_size"], run["learning_rate"], run["samples"]
    hh, ww, cc = run["image_shape"]
    images = np.fromfile(os.path.join(a.dir, "images.f32"), dtype="<f4")
    labels = np.fromfile(os.path.join(a.dir, "labels.f32"), dtype="<f4")
    if images.size != n * hh * ww * cc or labels.size != n * run["classes"] or n < steps * batch:
        raise SystemExit(f"images.f32 / labels.f32 hold {images.size} / {labels.size} values, "
                         f"want {n * hh * ww * cc} / {n * run['classes']} for {steps} batches of {batch}")
    x_all = torch.from_numpy(images.reshape(n, hh, ww, cc)).permute(0, 3, 1, 2).contiguous()  # NHWC -> NCHW
    y_all = torch.from_numpy(labels.reshape(n, run["classes"]))
    batches = [(x_all[s * batch:(s + 1) * batch], y_all[s * batch:(s + 1) * batch]) for s in range(steps)]
    initial = read_safetensors(os.path.join(a.dir, "initial.safetensors"))
    go = run["losses"]

    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), oneDNN (mkldnn) "
          f"{'available' if torch.backends.mkldnn.is_available() else 'absent'}; variant {run['variant']}; "
          f"{steps} SGD steps (lr {lr}) of batch {batch}, dropout 0, no shuffle")
    print(f"gokeras per-step loss: {run.get('loss_method', '?')}")

    twin = Twin(run)
    twin.load(initial)
    pt = twin.train(batches, lr)
    final_go = read_safetensors(os.path.join(a.dir, "final.safetensors"))
    final_pt = twin.weights()

    cols = {}  # extra columns: name -> per-step values
    notes = []
    if not a.no_diagnostics:
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
        cols["PT no-mkldnn vs PT"] = [rel(x, y) for x, y in zip(pt_nomk, pt)]
        cols["gokeras vs PT f64"] = [rel(x, y) for x, y in zip(go, pt64)]
        cols["PT vs PT f64"] = [rel(x, y) for x, y in zip(pt, pt64)]
        if run.get("trajectory"):
            resync, wdiff = [], []
            prev = initial
            for s in range(steps):
                t = Twin(run)
                t.load(prev)
                resync.append(t.train(batches[s:s + 1], lr)[0])
                after = final_go if s == steps - 1 else read_safetensors(
                    os.path.join(a.dir, "steps", f"step-{s + 1:04d}.safetensors"))
                ptw = t.weights()
                wdiff.append(max(float(np.max(np.abs(ptw[k] - after[k]) / (1 + np.abs(ptw[k])))) for k in after))
                prev = after
            cols["re-synced rel"] = [rel(x, y) for x, y in zip(go, resync)]
            cols["re-synced weights"] = wdiff
        else:
            notes.append("(no --trajectory weights in DIR: the re-synced check is skipped)")

    head = f"{'step':>4}  {'gokeras':>11}  {'PyTorch':>11}  {'rel. diff':>9}" + "".join(f"  {c:>18}" for c in cols)
    print(head)
    for i, (g, t) in enumerate(zip(go, pt)):
        print(f"{i + 1:>4}  {g:>11.8f}  {t:>11.8f}  {rel(g, t):>9.2e}" + "".join(f"  {cols[c][i]:>18.2e}" for c in cols))
    diffs = [rel(g, t) for g, t in zip(go, pt)]
    worst_step = max(range(steps), key=lambda i: diffs[i] if diffs[i] == diffs[i] else float("inf"))
    worst = diffs[worst_step]
    wworst, wname = max((float(np.max(np.abs(final_pt[k] - final_go[k]) / (1 + np.abs(final_pt[k])))), k) for k in final_go)
    print(f"final weights after {steps} steps: largest |gokeras - PyTorch| / (1 + |PyTorch|) {wworst:.2e} ({wname})")
    if cols:
        print("diagnostics (they do not change the result):")
        for c, v in cols.items():
            what = {
                "PT no-mkldnn vs PT": "PyTorch float32 with oneDNN off vs on (two float32 PyTorch runs)",
                "gokeras vs PT f64": "gokeras vs PyTorch float64",
                "PT vs PT f64": "PyTorch float32 vs PyTorch float64",
                "re-synced rel": "each step's loss, PyTorch float32 from gokeras' weights before the step, vs gokeras",
                "re-synced weights": "weights one step later, PyTorch float32 from gokeras' weights, |diff| / (1 + |w|)",
            }[c]
            j = max(range(len(v)), key=v.__getitem__)
            first10 = max(v[:10])
            print(f"  {what}: worst {v[j]:.2e} at step {j + 1} (steps 1-10: {first10:.2e})")
    for note in notes:
        print(note)
    ok = worst <= a.tolerance
    print(f"worst relative loss difference {worst:.3e} at step {worst_step + 1} "
          f"(gokeras {go[worst_step]:.9f}, PyTorch {pt[worst_step]:.9f}); tolerance {a.tolerance:g}: "
          f"{'PASS' if ok else 'FAIL'}")
    if not ok:
        first_bad = next(i for i, d in enumerate(diffs) if not d <= a.tolerance)
        if first_bad == 0:
            print("FAIL: the first step's loss (the forward pass from the initial weights) differs: "
                  "suspect the weight mapping, the flatten order or the padding")
        else:
            print(f"FAIL: the first steps agree; step {first_bad + 1} is the first beyond the tolerance")
            if "PT no-mkldnn vs PT" in cols and max(cols["PT no-mkldnn vs PT"]) > a.tolerance:
                print(f"  PyTorch float32 with oneDNN off exceeds the tolerance against PyTorch float32 itself "
                      f"({max(cols['PT no-mkldnn vs PT']):.2e}): the {steps} steps drift apart beyond {a.tolerance:g} "
                      f"between any two float32 implementations, not only between gokeras and PyTorch")
            if "re-synced rel" in cols:
                print(f"  from gokeras' own weights each step's loss agrees within {max(cols['re-synced rel']):.2e}")
        sys.exit(1)


if __name__ == "__main__":
    main()
