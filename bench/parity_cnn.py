#!/usr/bin/env python3
"""Checks that gokeras trains the Keras cifar10_cnn (and ResNet-20) as PyTorch does.

Reads what bench/cnnparity (go run ./bench/cnnparity --out DIR --trajectory)
wrote to DIR: the model's initial weights (initial.safetensors), the weights
after each step (steps/step-NNNN.safetensors, final.safetensors), the
synthetic images and one-hot labels (raw little-endian float32), one more
batch of images with gokeras' Predict outputs on it after the last step
(eval_images.f32, predict.f32), and run.json with the settings, the layers
and gokeras' loss at each step.

The result (PASS or FAIL, the exit status) is the re-synced check alone:
each step is replayed in PyTorch (bench/torch_cnn.py's model, dropout
rates 0, SGD), in float32 (the reference) and in float64 (the yardstick),
from gokeras' own weights before it, on the same batch, and at every step
  - its loss must match gokeras' loss for that step within --loss-tolerance
    (1e-5) relative;
  - the output layer's weights after it (the last Dense: kernel and bias as
    one vector w) must match within --weight-tolerance (1e-5) relative to
    them, ||w_gokeras - w_PyTorch||_2 <= 1e-5 ||w_PyTorch||_2, and within
    --output-step-tolerance (1e-3) of the step's change,
    ||w_gokeras - w_PyTorch||_2 <= 1e-3 ||w_PyTorch - w_before||_2;
  - every other layer's weights after it (kernel and bias; the
    BatchNormalization's gamma and beta) within --step-tolerance (1e-2) of
    the step's change of that layer, in the same 2-norms;
  - a step figure also passes where ||w_gokeras - w_PyTorch||_2 is below
    one float32 ulp of the layer's weights, 2^-23 ||w||_2, the rounding of
    w + step alone (a step that small is not measurable in float32);
  - BatchNormalization's moving mean and variance after it (updated from
    the batch statistics), each within --moving-tolerance (1e-5) relative to
    itself (2-norm);
and, after the last step, PyTorch in eval mode (model.eval(): the moving
statistics) from gokeras' final weights must give gokeras' Predict outputs
on the extra batch within --eval-tolerance (1e-6): max|gokeras - PyTorch|
over the softmax outputs, which lie in [0, 1].

Why these figures. Each step starts from the same weights in both
frameworks, so they compare one step's arithmetic; they must catch a
gradient error as small as 3% (bench/cnn-parity-control.sh: every loss
gradient scaled by 32/33, which changes every layer's step by 1/33 =
3.0e-2 of itself) and pass two correct float32 implementations. Figures
are 2-norms over a layer, in which an error in a few entries weighs little
and an error in every entry weighs in full. Measured values below are from
bench/results/cnn-parity-2026-11-27-{plain,batchnorm}.txt and the runs
that chose the settings.
  - The output layer's gradient, h^T (softmax - y) / batch, is a function
    of forward values only, and a forward pass is continuous in rounding
    (ReLU and max pooling are continuous functions): two float32
    implementations agree on it to accumulation error. Measured: at most
    2.6e-8 of the weights (PyTorch float32 against float64: 2.5e-8), and
    1.4e-5 of the step (PyTorch's own: 4.3e-5; this one grows as the loss
    shrinks, since softmax - y then cancels in float32), hence 1e-5 of the
    weights and 1e-3 of the step. A loss gradient error shows there first
    and in full: a 3% one reads 3.0e-2 of the step.
  - Every other layer's gradient passes backwards through ReLU masks and
    max-pooling choices, which are not continuous: where a max-pooling
    window's two largest inputs, or a ReLU's input and 0, differ by less
    than float32 rounding, two correct implementations route a piece of
    the gradient differently. Such near-ties come every few steps and move
    a layer's step by up to 3.1e-3 of itself measured in gokeras against
    PyTorch float32, and up to 5.3e-3 in PyTorch float32 against PyTorch
    float64 from the same weights; away from them the layers agree within
    about 1e-5 of the step. Hence 1e-2 of the step: a 3% error in these
    layers fails by 3x, the worst near-tie seen passes by 2x (PyTorch's
    own) to 3x (gokeras').
  - One step in a run may go past that 1e-2, up to twice it
    (--near-tie-steps 1, --near-tie-factor 2): the step whose near-tie
    reroutes the most. ResNet-20 runs some 6 million ReLUs a step at batch
    32, on inputs of about unit size after BatchNormalization, so about
    one a step lies within float32's rounding (1e-7) of zero, and which of
    them a float32 implementation flips depends on its order of rounding:
    PyTorch float32 itself parts from float64 by up to 1.4e-2 of a step
    (bench/results/resnet20-parity-2026-11-28-3.txt), and gokeras with
    Winograd's forward convolutions reached 1.39e-2 at one step of 50, every
    layer before the flip at that step and none after it, every other step
    within the tolerance (resnet20-parity-2026-11-28-5.txt). A 3% gradient error
    reads 3e-2 at every step and still fails, by 1.5x at that step and at
    every other.
  - Relative to the weights, a near-tie's effect is its share of the step
    times the step's size against the weights, which at lr 0.1 varies
    from 1e-3 to 0.2 by layer and step: no bound relative to the weights
    passes every near-tie and fails a 3% error in every layer. All the
    weights as one vector reached 3.9e-6 of themselves at a near-tie, and
    a 3% error 4.4e-5 at its smallest, but the same near-tie on one of the
    largest steps would have read about 2.5e-5: printed as information
    (model/|w|), not a criterion.
  - The step settings (bench/parity.sh: 50 steps of batch 32, lr 0.1 for
    the plain variant) make the output layer's step at least 3e-3 of its
    weights at every step, so that a 3% gradient error reads at least
    9.8e-5 of the weights there, ten times the 1e-5; at Keras' default lr
    0.01 it would read 1e-5 to 2e-5, no test at all. With
    BatchNormalization the model learns the synthetic task by step 20 at
    lr 0.1 (loss 3e-4, whose float32 rounding alone is 5e-5 relative, and
    steps of 1e-5 of the weights), so that variant runs at lr 0.01 (loss
    2.3 -> 0.025), where a 3% error reads at least 1.7e-5 of the output
    layer's weights. Figures against the step do not depend on the
    learning rate; the table prints, per step, what a 32/33 gradient
    would read against the weights.
  - Moving statistics and eval outputs have no near-ties (forward values
    only): measured within 6.5e-8 relative and 1.8e-7.
The per-step table prints each figure beside PyTorch float32 against
float64 (its own float32 error at that step).

Then, as information that does not change the result (--no-free-run skips
it), the free-running comparison: PyTorch trains all the steps from the
initial weights on its own, and its per-step losses are set beside
gokeras'; beside them, two float32 PyTorch runs against each other (oneDNN,
"mkldnn", off vs on: two sets of float32 convolution kernels), and each
against float64 PyTorch. Over 50 steps float32 trajectories drift apart
through near-ties in ReLU and max pooling, which turn rounding differences
of 1e-7 into loss differences of up to 1e-4 at lr 0.01, and at lr 0.1
(the plain variant's setting) into trajectories that part entirely after
some 40 steps (loss differences of 0.5, PyTorch against itself alike),
between any two float32 implementations: gokeras' free-running drift is to
be read against PyTorch's own.

ResNet-20 (variant resnet20: applications.ResNetV1(20, ...), Keras'
cifar10_resnet ResNet v1, against bench/torch_resnet.py's twin, at lr 0.01
as the batchnorm variant). The twin's calls are matched with gokeras' graph
(run.json's "calls") by class, inputs and weight shapes, then their output
shapes compared: Keras names a layer when it is made, gokeras' NewModel in
the order of its graph walk, which names a stride-2 block's shortcut
convolution before the block's two (the run prints the pairs that differ).
The loss adds the convolutions' L2(1e-4) kernel penalty in both frameworks;
the convolutions' biases ahead of a BatchNormalization are inert as above;
stride-2 convolutions pad TensorFlow's way (0 before, 1 after). Its hidden
layers' gradients pass back through 19 BatchNormalizations, whose backward
pass cancels sums over 32·32·32 values per channel: float32 replays of a
step differ from float64 by a median 1e-3 of the step and up to 1.26e-2
(PyTorch float32 against float64, conv2d_3 at step 43 of the recorded run),
above the 1e-2. So with --or-float64 (bench/parity.sh sets it for
resnet20) a hidden layer's step passes within 1e-2 of either replay, the
float32 or the float64 one: the figure is gokeras' distance to the nearer,
worst 8.2e-3 (median 2.8e-4) over the 50 steps; a 3% gradient error is 3%
from both. The loss (worst 3.0e-7 relative), the output layer (1.3e-8 of
its weights; a 3% error reads at least 8.4e-5) and the moving statistics
(1.2e-7) hold the CNN's tolerances with margins of 30x or more.

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
from torch_cnn import VARIANTS as CNN_VARIANTS, build_model  # noqa: E402
from torch_resnet import build_model as build_resnet  # noqa: E402

VARIANTS = CNN_VARIANTS + ("resnet20",)

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
        if run["variant"] == "resnet20":
            self.resnet(run)
        else:
            self.sequential(run)
        self.model.to(dtype).train()
        self.dtype = dtype

    def resnet(self, run):
        """torch_resnet.py's twin, its layer calls matched with gokeras' graph
        (run.json's calls): a twin call pairs with the gokeras call of the same
        class, on the inputs already paired, whose weights have the shapes
        of the twin's (a 3x3 and a 1x1 convolution of a stride-2 block take
        the same input); then every call's output shape must agree."""
        self.model = build_resnet(20, run["classes"])
        go = {c["layer"]: c for c in run["calls"]}
        kshape = {w["name"].split("/")[0]: w["shape"] for l in run["layers"] for w in l["weights"]
                  if w["name"].endswith("/kernel")}
        inputs = [c for c in run["calls"] if not c["inputs"] or any(i not in go for i in c["inputs"])]
        pair = {"input_1": next(i for c in inputs for i in c["inputs"] if i not in go)}
        used = set()
        for name, cls, ins in self.model.graph():
            m = self.model.layer[name]
            want = None
            if isinstance(m, torch.nn.Conv2d):
                want = list(m.weight.shape[2:]) + [m.in_channels, m.out_channels]
            elif isinstance(m, torch.nn.Linear):
                want = [m.in_features, m.out_features]
            found = [c["layer"] for c in run["calls"] if c["layer"] not in used and c["type"] == cls
                     and c["inputs"] == [pair[i] for i in ins] and kshape.get(c["layer"]) == want]
            if len(found) != 1:
                raise SystemExit(f"the twin's {name} ({cls} on {ins}) matches {len(found)} gokeras calls: {found}")
            pair[name] = found[0]
            used.add(found[0])
        if len(used) != len(run["calls"]):
            raise SystemExit(f"gokeras' calls {sorted(set(go) - used)} have no counterpart in the twin")
        shapes = {}
        hooks = [self.model.layer[n].register_forward_hook(
            lambda m, i, o, n=n: shapes.__setitem__(n, list(o.shape[1:]) if o.dim() == 2 else
                                                    [o.shape[2], o.shape[3], o.shape[1]]))
            for n, _, _ in self.model.graph()]
        self.model.eval()
        with torch.no_grad():
            self.model(torch.zeros(1, run["image_shape"][2], *run["image_shape"][:2]))
        for h in hooks:
            h.remove()
        for n, g in pair.items():
            if n in shapes and shapes[n] != go[g]["output_shape"]:
                raise SystemExit(f"the twin's {n} outputs {shapes[n]}, gokeras' {g} {go[g]['output_shape']}")
        # Keras names a layer when it is made, gokeras' NewModel in the order
        # of its graph walk: where they differ, say so.
        self.renamed = [(n, g) for n, g in pair.items() if n != g]
        layer_of = {g: n for n, g in pair.items()}
        self.pairs = [(k, self.model.layer[layer_of[k["name"]]]) for k in run["layers"] if k["weights"]]
        for k, t in self.pairs:
            want = KERAS_TO_TORCH.get(k["type"])
            if want is None or not isinstance(t, want):
                raise SystemExit(f"gokeras layer {k['name']} ({k['type']}) pairs with PyTorch's {type(t).__name__}: no mapping")
        self.flat = {}  # the twin flattens (H, W, C) as Keras does
        graph = self.model.graph()
        self.inert = {}
        for name, cls, _ in graph:
            after = [c for c, _, ins in graph if name in ins]
            if cls == "Conv2D" and after and all(isinstance(self.model.layer[c], torch.nn.BatchNorm2d) for c in after):
                self.inert[pair[name] + "/bias"] = pair[name] + "/kernel"

    def sequential(self, run):
        """bench/torch_cnn.py's model, paired with gokeras' layers in order."""
        self.renamed = []
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
            # Keras' categorical cross-entropy from the logits, batch mean,
            # plus the kernel regularizers' penalty where the model has them.
            loss = -(y * F.log_softmax(self.model(x), dim=1)).sum(1).mean()
            if hasattr(self.model, "penalty"):
                loss = loss + self.model.penalty()
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
MUTATION = 1 - 32 / 33  # the relative step error of a loss gradient scaled by 32/33 (bench/cnn-parity-control.sh)


def norm(d, keys):
    """The 2-norm of the tensors keys of d taken as one vector (float64)."""
    return float(np.sqrt(sum(float(np.sum(np.square(np.asarray(d[k], np.float64)))) for k in keys)))


def dist(a, b, keys):
    """||a - b||_2 over the tensors keys taken as one vector (float64)."""
    return float(np.sqrt(sum(float(np.sum(np.square(np.asarray(a[k], np.float64) - np.asarray(b[k], np.float64))))
                             for k in keys)))


def ratio(x, y):
    return x / y if y > 0 else (0.0 if x == 0 else float("inf"))


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


def layer_groups(run):
    """[(layer name, [its trainable weight names])] in model order."""
    out = []
    for l in run["layers"]:
        ks = [w["name"] for w in l["weights"] if not is_moving(w["name"])]
        if ks:
            out.append((l["name"], ks))
    return out


def step_figures(before, go, w32, w64, groups, moving, a):
    """The figures of one re-synced step (see the module's docstring):
    before, gokeras' weights before the step; go, after it; w32 and w64,
    PyTorch's float32 and float64 replays from before; groups, the layers'
    trainable tensors, the output layer last. Returns a dict."""
    trainable = [k for ks in (g[1] for g in groups) for k in ks]
    r = {"layers": {}, "moving": {}, "bad": []}
    wn = norm(w32, trainable)
    r["model"] = ratio(dist(go, w32, trainable), wn)
    r["model_pt"] = ratio(dist(w32, w64, trainable), norm(w64, trainable))
    r["model_step"] = ratio(dist(w32, before, trainable), wn)
    for i, (name, ks) in enumerate(groups):
        out = i == len(groups) - 1
        step = dist(w32, before, ks)
        d = dist(go, w32, ks)
        wl = norm(w32, ks)
        f = {"step": ratio(d, step), "weights": ratio(d, wl), "step_size": ratio(step, wl),
             "pt": ratio(dist(w32, w64, ks), dist(w64, before, ks)),
             "pt_weights": ratio(dist(w32, w64, ks), norm(w64, ks)),
             "go64": ratio(dist(go, w64, ks), dist(w64, before, ks)), "output": out}
        # Below a float32 ulp of the weights the step's figure is their
        # rounding, not its arithmetic.
        tol = a.output_step_tolerance if out else a.step_tolerance
        f["step_ok"] = d <= max(tol * step, EPS32 * wl)
        # With --or-float64 a hidden layer's figure is gokeras' distance to
        # the nearer of PyTorch's two replays (see the module's docstring).
        f["decide"] = f["step"]
        if a.or_float64 and not out:
            f["decide"] = min(f["step"], f["go64"])
            f["step_ok"] = f["step_ok"] or dist(go, w64, ks) <= max(tol * dist(w64, before, ks), EPS32 * wl)
        f["weights_ok"] = not out or d <= a.weight_tolerance * wl
        f["ok"] = f["step_ok"] and f["weights_ok"]
        r["layers"][name] = f
        if not f["ok"]:
            r["bad"].append(name)
    for k in moving:
        f = {"weights": ratio(dist(go, w32, [k]), norm(w32, [k])),
             "pt": ratio(dist(w32, w64, [k]), norm(w64, [k]))}
        f["ok"] = f["weights"] <= a.moving_tolerance
        r["moving"][k] = f
        if not f["ok"]:
            r["bad"].append(k)
    return r


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir", help="the directory bench/cnnparity --trajectory wrote")
    p.add_argument("--loss-tolerance", type=float, default=1e-5,
                   help="largest relative difference of a re-synced step's loss (default 1e-5)")
    p.add_argument("--weight-tolerance", type=float, default=1e-5,
                   help="largest ||gokeras - PyTorch||_2 / ||PyTorch||_2 of the output layer's weights (kernel and "
                        "bias as one vector) after a re-synced step (default 1e-5)")
    p.add_argument("--output-step-tolerance", type=float, default=1e-3,
                   help="largest ||gokeras - PyTorch||_2 of the output layer's weights after a re-synced step as a "
                        "fraction of ||PyTorch after - before||_2, the step's change of them (default 1e-3)")
    p.add_argument("--step-tolerance", type=float, default=1e-2,
                   help="the same for every other layer, whose gradient passes through ReLU or max-pooling masks "
                        "that float32 near-ties can flip (default 1e-2)")
    p.add_argument("--near-tie-steps", type=int, default=1,
                   help="how many steps may take a near-tie's reroute: their hidden layers within --near-tie-factor "
                        "times --step-tolerance (default 1; see the docstring)")
    p.add_argument("--near-tie-factor", type=float, default=2.0,
                   help="how far past --step-tolerance a near-tie step's layers may be (default 2)")
    p.add_argument("--moving-tolerance", type=float, default=1e-5,
                   help="largest ||gokeras - PyTorch||_2 / ||PyTorch||_2 of a BatchNormalization moving mean or "
                        "variance after a re-synced step (default 1e-5)")
    p.add_argument("--eval-tolerance", type=float, default=1e-6,
                   help="largest |diff| of an eval-mode softmax output (default 1e-6)")
    p.add_argument("--or-float64", action="store_true",
                   help="a layer other than the output layer also passes a step within --step-tolerance of PyTorch's "
                        "float64 replay of it (bench/parity.sh sets it for resnet20; see the docstring)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--no-free-run", action="store_true", help="only the re-synced check, which sets the exit status")
    p.add_argument("--figures", metavar="FILE", help="also write the per-step figures to FILE as JSON")
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
    twin = Twin(run)
    inert = twin.inert
    groups = layer_groups(run)
    trainable = [k for _, ks in groups for k in ks]
    if sorted(trainable + moving) != sorted(initial):
        raise SystemExit(f"run.json's layers name {sorted(trainable + moving)}, initial.safetensors holds {sorted(initial)}")

    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), oneDNN (mkldnn) "
          f"{'available' if torch.backends.mkldnn.is_available() else 'absent'}; variant {run['variant']} "
          f"({len(trainable)} weight tensors in {len(groups)} layers, {len(moving)} moving-statistics tensors); "
          f"{steps} SGD steps (lr {lr}) of batch {batch}, dropout 0, no shuffle")
    print(f"gokeras per-step loss: {run.get('loss_method', '?')}")
    if twin.renamed:
        print(f"the twin's layers carry the names Keras gives them when it makes them; gokeras' graph names "
              f"{len(twin.renamed)} of them otherwise (twin -> gokeras), matched by class, inputs and shapes: "
              + ", ".join(f"{a} -> {b}" for a, b in twin.renamed))

    # The re-synced check: each step from gokeras' weights before it, in
    # PyTorch float32 (the reference) and float64 (the yardstick).
    rs = []
    prev = initial
    for s in range(steps):
        t32, t64 = Twin(run), Twin(run, torch.float64)
        t32.load(prev)
        t64.load(prev)
        loss32 = t32.train(batches[s:s + 1], lr)[0]
        loss64 = t64.train(batches[s:s + 1], lr)[0]
        r = step_figures(prev, after_go[s], t32.weights(), t64.weights(), groups, moving, a)
        r["loss"], r["loss64"], r["loss_rel"] = loss32, loss64, rel(go[s], loss32)
        if not r["loss_rel"] <= a.loss_tolerance:
            r["bad"].insert(0, "loss")
        rs.append(r)
        prev = after_go[s]
    t = Twin(run)
    t.load(final_go)
    p_pt = t.predict(x_eval)
    t = Twin(run, torch.float64)
    t.load(final_go)
    ev_pt = float(np.max(np.abs(p_pt - t.predict(x_eval))))
    ev_abs = float(np.max(np.abs(p_go - p_pt)))
    ev_rel = float(np.max(np.abs(p_go - p_pt) / np.abs(p_pt)))
    ev_arg = float((p_go.argmax(1) == p_pt.argmax(1)).mean())

    out_name = groups[-1][0]
    hidden = [name for name, _ in groups[:-1]]

    def worst_hidden(r, key):
        return max((r["layers"][name][key], name) for name in hidden)

    print()
    print("RE-SYNCED CHECK (decides PASS/FAIL): each step run in PyTorch from gokeras' weights before it, on the same "
          "batch, in float32 (the reference) and float64 (the yardstick)")
    print(f"  loss rel. = |gokeras - PyTorch| / |PyTorch| of the step's loss; tolerance {a.loss_tolerance:g}")
    print(f"  out/|w| = the output layer ({out_name}: kernel and bias as one vector), ||gokeras - PyTorch||_2 / "
          f"||PyTorch||_2 after the step; tolerance {a.weight_tolerance:g}")
    print(f"  out/step = the same over ||PyTorch after - before||_2, the step's change; tolerance "
          f"{a.output_step_tolerance:g}")
    print(f"  layer/step = the same for each other layer, worst layer; tolerance {a.step_tolerance:g} (near-ties in "
          f"ReLU and max pooling, which float32 resolves either way, reroute parts of these layers' gradients)")
    print(f"    (a step figure is also within tolerance where ||gokeras - PyTorch||_2 is below one float32 ulp of "
          f"the layer's weights, {EPS32:.1e} ||w||_2: the rounding of w + step alone)")
    for b, k in inert.items():
        print(f"    {b}: the next layer is a BatchNormalization, so the loss does not depend on it (its gradient is zero "
              f"in exact arithmetic and both frameworks move it by rounding noise only): it counts in its layer, "
              f"beside {k}")
    if moving:
        print(f"  moving/|m| = per tensor, ||gokeras - PyTorch||_2 / ||PyTorch||_2 of moving_mean, moving_variance "
              f"(BatchNorm2d running_mean, running_var) after the step, worst; tolerance {a.moving_tolerance:g}")
    print("  PT f32/f64 = (information) the figure to its left between PyTorch's float32 and float64 replays of the "
          "step: what float32 alone gives")
    print(f"  model/|w| = (information) ||gokeras - PyTorch||_2 / ||PyTorch||_2 over all {len(trainable)} trainable "
          f"tensors as one vector; |step|/|w| = (information) ||PyTorch after - before||_2 / ||PyTorch||_2 over them")
    print(f"  A loss gradient scaled by 32/33 changes every step by {MUTATION:.2e} of itself: out/step and layer/step "
          f"would read {MUTATION:.2e}, out/|w| {MUTATION:.2e} x the output layer's |step|/|w| (the column "
          f"'32/33 out/|w|'), model/|w| {MUTATION:.2e} x |step|/|w|")
    head = (f"{'step':>4}  {'gokeras':>11}  {'PyTorch':>11}  {'loss rel.':>9}  {'out/|w|':>8}  {'PT f32/f64':>10}  "
            f"{'32/33 out/|w|':>13}  {'out/step':>8}  {'PT f32/f64':>10}  {'layer/step':>10}  {'(worst layer)':<20}  "
            f"{'PT f32/f64':>10}  {'(worst layer)':<20}")
    if moving:
        head += f"  {'moving/|m|':>10}  {'PT f32/f64':>10}"
    head += f"  {'model/|w|':>9}  {'PT f32/f64':>10}  {'|step|/|w|':>10}"
    print(head)
    for i, r in enumerate(rs):
        o = r["layers"][out_name]
        wl, pl = worst_hidden(r, "step"), worst_hidden(r, "pt")
        line = (f"{i + 1:>4}  {go[i]:>11.8f}  {r['loss']:>11.8f}  {r['loss_rel']:>9.2e}  {o['weights']:>8.2e}  "
                f"{o['pt_weights']:>10.2e}  {MUTATION * o['step_size']:>13.2e}  {o['step']:>8.2e}  {o['pt']:>10.2e}  "
                f"{wl[0]:>10.2e}  {wl[1]:<20}  {pl[0]:>10.2e}  {pl[1]:<20}")
        if moving:
            line += (f"  {max(f['weights'] for f in r['moving'].values()):>10.2e}"
                     f"  {max(f['pt'] for f in r['moving'].values()):>10.2e}")
        line += f"  {r['model']:>9.2e}  {r['model_pt']:>10.2e}  {r['model_step']:>10.2e}"
        if r["bad"]:
            line += "  beyond tolerance: " + ", ".join(r["bad"])
        print(line.rstrip())

    print()
    print("  per layer over the steps: layer/step worst (at step) and median; PT f32/f64 worst; gokeras vs PyTorch "
          "float64 worst; |step|/|w| of the layer, smallest..largest")
    for name, ks in groups:
        v = [r["layers"][name]["step"] for r in rs]
        j, _ = worst_of(v)
        pt = max(r["layers"][name]["pt"] for r in rs)
        g64 = max(r["layers"][name]["go64"] for r in rs)
        sz = [r["layers"][name]["step_size"] for r in rs]
        print(f"    {name:<20} {v[j]:.2e} ({j + 1:>2})  median {np.median(v):.2e}  PT f32/f64 {pt:.2e}  "
              f"gokeras/f64 {g64:.2e}  |step|/|w| {min(sz):.1e}..{max(sz):.1e}  "
              f"({', '.join(k.split('/')[-1] for k in ks)}{'; output layer' if name == out_name else ''})")

    checks = []
    lr_ = [r["loss_rel"] for r in rs]
    j, v = worst_of(lr_)
    checks.append((f"loss of each step: worst relative difference {v:.2e} at step {j + 1} "
                   f"(gokeras {go[j]:.9f}, PyTorch {rs[j]['loss']:.9f}); tolerance {a.loss_tolerance:g}",
                   all(d <= a.loss_tolerance for d in lr_)))
    ow = [r["layers"][out_name]["weights"] for r in rs]
    j, _ = worst_of(ow)
    pw = max(r["layers"][out_name]["pt_weights"] for r in rs)
    km, sm = min((r["layers"][out_name]["step_size"], i) for i, r in enumerate(rs))
    bad = [i + 1 for i, x in enumerate(ow) if not x <= a.weight_tolerance]
    checks.append((f"output layer ({out_name}) after each step, ||gokeras - PyTorch||_2 / ||PyTorch||_2: worst "
                   f"{ow[j]:.2e} (step {j + 1}), median {np.median(ow):.2e}; tolerance {a.weight_tolerance:g}; "
                   f"PyTorch float32 vs float64 reach {pw:.2e}; a loss gradient scaled by 32/33 would read "
                   f"{MUTATION * km:.2e} at the least (step {sm + 1})"
                   + (f"; beyond tolerance at steps {bad}" if bad else ""), not bad))
    os_ = [r["layers"][out_name]["step"] for r in rs]
    j, _ = worst_of(os_)
    ps = max(r["layers"][out_name]["pt"] for r in rs)
    bad = [i + 1 for i, r in enumerate(rs) if not r["layers"][out_name]["step_ok"]]
    checks.append((f"output layer ({out_name}) after each step, ||gokeras - PyTorch||_2 over the step's change: "
                   f"worst {os_[j]:.2e} (step {j + 1}), median {np.median(os_):.2e}; tolerance "
                   f"{a.output_step_tolerance:g}; PyTorch float32 vs float64 reach {ps:.2e}; a loss gradient scaled "
                   f"by 32/33 reads {MUTATION:.2e}" + (f"; beyond tolerance at steps {bad}" if bad else ""), not bad))
    ls = [worst_hidden(r, "decide") for r in rs]
    j, _ = worst_of([x[0] for x in ls])
    lp = [worst_hidden(r, "pt") for r in rs]
    jp, _ = worst_of([x[0] for x in lp])
    bad = [(i + 1, k) for i, r in enumerate(rs) for k in r["bad"] if k in hidden]
    # One near-tie step allowed (--near-tie-steps): its layers within
    # --near-tie-factor times the tolerance (see the docstring).
    tie_steps = sorted({i for i, _ in bad})
    tie_ok = bool(bad) and len(tie_steps) <= a.near_tie_steps and all(
        rs[i - 1]["layers"][k]["decide"] <= a.near_tie_factor * a.step_tolerance for i, k in bad)
    nearer = " (the nearer of PyTorch float32 and float64, --or-float64)" if a.or_float64 else ""
    if a.or_float64:
        v32 = [worst_hidden(r, "step") for r in rs]
        j32, _ = worst_of([x[0] for x in v32])
        nearer += (f"; against PyTorch float32 alone worst {v32[j32][0]:.2e} ({v32[j32][1]}, step {j32 + 1}), "
                   f"{sum(1 for x in v32 if x[0] > a.step_tolerance)} step(s) beyond {a.step_tolerance:g}")
    checks.append((f"every other layer after each step, ||gokeras - PyTorch||_2 over the step's change{nearer}: worst "
                   f"{ls[j][0]:.2e} ({ls[j][1]}, step {j + 1}), median {np.median([x[0] for x in ls]):.2e}; "
                   f"tolerance {a.step_tolerance:g}; PyTorch float32 vs float64 reach {lp[jp][0]:.2e} ({lp[jp][1]}, "
                   f"step {jp + 1}); a loss gradient scaled by 32/33 reads {MUTATION:.2e}"
                   + (f"; beyond tolerance: {bad}" if bad else "")
                   + (f" (allowed: {len(tie_steps)} step(s), within {a.near_tie_factor:g} times the tolerance, "
                      f"at most {a.near_tie_steps} allowed as near-ties)" if tie_ok else ""), not bad or tie_ok))
    if moving:
        mv = [max((f["weights"], k) for k, f in r["moving"].items()) for r in rs]
        j, _ = worst_of([x[0] for x in mv])
        pm = max(f["pt"] for r in rs for f in r["moving"].values())
        bad = [(i + 1, k) for i, r in enumerate(rs) for k in r["bad"] if k in r["moving"]]
        checks.append((f"moving statistics after each step, ||gokeras - PyTorch||_2 / ||PyTorch||_2: worst "
                       f"{mv[j][0]:.2e} ({mv[j][1]}, step {j + 1}); tolerance {a.moving_tolerance:g}; PyTorch float32 "
                       f"vs float64 reach {pm:.2e}" + (f"; beyond tolerance: {bad}" if bad else ""), not bad))
    checks.append((f"eval mode after step {steps} (gokeras Predict vs PyTorch model.eval() from gokeras' final weights, "
                   f"{ne} new images x {classes} softmax outputs): worst |diff| {ev_abs:.2e} (relative {ev_rel:.2e}, "
                   f"same argmax for {ev_arg:.0%}); tolerance {a.eval_tolerance:g}; PyTorch float32 vs float64 "
                   f"{ev_pt:.2e}", ev_abs <= a.eval_tolerance))
    mw = [r["model"] for r in rs]
    j, _ = worst_of(mw)
    print(f"  (information) all weights, model/|w|: worst {mw[j]:.2e} (step {j + 1}), median {np.median(mw):.2e}; "
          f"PyTorch float32 vs float64 reach {max(r['model_pt'] for r in rs):.2e}; 32/33 would read "
          f"{MUTATION * min(r['model_step'] for r in rs):.2e} at the least")

    if a.figures:
        with open(a.figures, "w") as f:
            json.dump({"variant": run["variant"], "steps": steps, "or_float64": a.or_float64, "learning_rate": lr, "batch_size": batch,
                       "tolerances": {"loss": a.loss_tolerance, "weights": a.weight_tolerance,
                                      "near_tie_steps": a.near_tie_steps, "near_tie_factor": a.near_tie_factor,
                                      "output_step": a.output_step_tolerance,
                                      "step": a.step_tolerance, "moving": a.moving_tolerance,
                                      "eval": a.eval_tolerance},
                       "eval_abs": ev_abs, "checks": [[w, bool(c)] for w, c in checks], "per_step": rs}, f, indent=1)

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
