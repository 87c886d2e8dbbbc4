#!/usr/bin/env python3
"""Checks every optimizer of gokeras' package optim against a PyTorch twin.

Reads what bench/optimparity (go run ./bench/optimparity --out DIR) wrote
to DIR: the initial weights of a small model (Flatten -> Dense(64, relu) ->
Dense(10, softmax), initial.safetensors), the synthetic samples and one-hot
labels (raw little-endian float32), and run.json with, per optimizer
configuration, the optimizer's Keras config (class_name and arguments, as
Keras' get_config gives them) and gokeras' loss at each of its training
steps. Each configuration's twin starts from the same weights, sees the
same batches in the same order (no shuffle) and updates with the
arithmetic of Keras 2.11+ on TensorFlow (keras/optimizers/
optimizer_experimental/*.py and the base class's _clip_gradients and
_apply_weight_decay), once in float32 and once in float64.

THE TWINS. Where torch.optim's arithmetic is Keras' (the same formula,
up to rounding), the twin is torch.optim: SGD (plain, momentum, Nesterov,
with a constant learning rate: PyTorch's velocity is in gradient units and
Keras' in weight units, v_keras = -lr·v_torch, which is the same update
while lr is constant), Adadelta (torch.optim.Adadelta with Keras' lr, rho
and epsilon). Everywhere else the twin is the TF formula written in torch
tensors (a "TF-formula twin"), and the reason is one of these deliberate
differences between Keras and PyTorch:
  - Adam, AdamW, AMSGrad: Keras divides by sqrt(v) + epsilon with the bias
    corrections folded into the step, lr·sqrt(1-b2^t)/(1-b1^t), so its
    epsilon is the paper's "epsilon hat"; PyTorch divides by
    sqrt(v/(1-b2^t)) + epsilon, i.e. Keras' epsilon is PyTorch's epsilon
    times sqrt(1-b2^t), a factor that starts at 0.03 (b2 = 0.999, t = 1).
  - RMSprop: Keras divides by sqrt(v + epsilon) (centered: sqrt(v - a² +
    epsilon)), PyTorch by sqrt(v) + epsilon. With momentum both accumulate
    lr·g/denominator (PyTorch: g/denominator, times lr at the end).
  - Adagrad: Keras divides by sqrt(accumulator + epsilon), PyTorch by
    sqrt(accumulator) + epsilon; both start the accumulator at 0.1 here
    (Keras' initial_accumulator_value; PyTorch's default is 0).
  - Adamax: Keras: u = max(b2·u, |g|), step lr·m/((1-b1^t)·(u + epsilon));
    PyTorch: u = max(b2·u, |g| + epsilon), step lr/(1-b1^t)·m/u.
  - Nadam: Keras' momentum schedule is mu_t = b1·(1 - 0.5·0.96^t);
    PyTorch's is b1·(1 - 0.5·0.96^(t·psi)) with psi = momentum_decay,
    default 0.004. psi = 1 would be Keras' schedule, but the installed
    PyTorch 1.13 computes the product for the next step as
    prod_t·mu_t·mu_(t+1), counting mu_t twice (fixed in PyTorch 2.0,
    pytorch/pytorch#92699), so the twin is the TF formula.
  - weight_decay: Keras 2.11's is decoupled and applied to every variable
    before the update, w -= w·weight_decay·lr (the learning rate of the
    step). torch.optim's weight_decay is an L2 term added to the gradient
    (SGD, RMSprop, Adagrad, Adam, ...), except AdamW's, which is Keras'
    decay but comes with PyTorch's Adam arithmetic.
  - clipnorm: Keras clips each variable's gradient to the norm,
    g·clipnorm/max(|g|, clipnorm) (tf.clip_by_norm); PyTorch has only
    clip_grad_norm_, which scales by clipnorm/(|g| + 1e-6).
    global_clipnorm: tf.clip_by_global_norm, g·c/max(|all g|, c); PyTorch's
    clip_grad_norm_ over all parameters again adds 1e-6. clipvalue:
    clamp(g, -c, c), the same in both (torch.nn.utils.clip_grad_value_).
    Keras applies only ONE of them: clipnorm if set, else global_clipnorm,
    else clipvalue (optimizer._clip_gradients returns after the first);
    the twin does the same.
  - Schedules: Keras evaluates learning_rate(iterations) before each step
    (iterations = 0 for the first); the twin does, and feeds it to the
    formulas above, where PyTorch's SGD with momentum would scale the
    whole accumulated velocity by the current rate.
Where a documented difference is too small to show at Keras' defaults
(epsilon 1e-7 beside Adagrad's accumulator, which starts at 0.1, or beside
Adamax's max(|g|)), a configuration with a larger epsilon shows it
(adagrad_epsilon, adamax_epsilon). For plain SGD, PyTorch's coupled
weight_decay is Keras' decoupled one (w -= lr·(g + wd·w) either way).

Scalar coefficients (the bias corrections, Nadam's mu products, a
schedule's rate, Keras' 1 - beta_1 and 1 - beta_2) are Python floats,
float64, rounded once where they meet a tensor, in both twins, which is
the formula; gokeras computes the bias corrections in float64 too
(optim.Update.AdamRate, NadamFactors). TensorFlow computes the bias
corrections in float32: tf.pow(float32(0.999), t) makes 1 - beta_2^t
1.29e-5 smaller than exact for small t, so Keras on TensorFlow takes Adam
steps 6.4e-6 (relative) shorter than the formula's; Keras' 1 - beta_2 is
a Python double, 0.001 to float32 precision. The twins follow the formula,
not TensorFlow's rounding of it.

THE CHECK. Per configuration, with L_go, L_32 and L_64 the per-step losses
of gokeras and of the float32 and float64 twins:
  1. steps 1-10: max_t |L_go(t) - L_32(t)| / |L_32(t)| <= 1e-6
     (--early-tolerance), the float32 twin being the like-for-like
     reference;
  2. steps 1-50: max_t |L_go(t) - L_64(t)|
                   <= 2 · max_t |L_32(t) - L_64(t)| + 1e-6 · max_t |L_64(t)|
     (--drift-factor 2).
Why 2: gokeras and the float32 twin are two float32 evaluations of the same
formulas that round differently (summation orders of the matrix products,
where scalars are rounded, fused updates); each departs from the float64
trajectory by float32 rounding amplified by the same dynamics (adaptive
optimizers divide by running roots of tiny squares and amplify it most),
so the float32 twin's distance from float64 measures how far float32
rounding alone carries this trajectory, and a correct gokeras is expected
at the same order, not at the same value: the factor 2 leaves room for a
different rounding pattern, and the 1e-6·|L| term (criterion 1's
tolerance) for trajectories where float32 stays within a few ulps of
float64. A formula that differs from Keras' (a misplaced epsilon, a wrong
bias correction, a clip applied where Keras applies none) moves the losses
by more than that, and the report shows how much for each documented
difference: for each TF-formula twin it also runs PyTorch's own
torch.optim with the same arguments in float32 and says whether it would
pass the same check ("control"). A configuration passes when 1 and 2 hold.

Also printed, as information: gokeras against the float64 twin on steps
1-10, the largest step-to-step change of the loss, how often clipping was
active, and the weights after the last step (gokeras' final.safetensors
against the float64 twin's, max|diff| / max|w| per tensor, worst tensor,
beside the float32 twin's).

Prints one block per configuration and a summary, ending with a PASS or
FAIL line per configuration; exits 1 if any fails.
"""
import argparse
import json
import math
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from parity_cnn import read_safetensors  # noqa: E402


# ---------------------------------------------------------------- model


class Model:
    """The model of bench/optimparity with gokeras' weights, in Keras'
    layout (kernels (in, out)), so that no tensor is transposed: logits =
    relu(x·W1 + b1)·W2 + b2; the loss is Keras' categorical cross-entropy
    after a softmax, computed from the logits as TensorFlow does
    (softmax cross-entropy), the batch mean."""

    def __init__(self, run, weights, dtype):
        kinds = [(l["type"], [w["name"] for w in l["weights"]]) for l in run["layers"]]
        dense = [names for kind, names in kinds if kind == "Dense"]
        others = [kind for kind, _ in kinds if kind not in ("Dense", "Flatten", "InputLayer")]
        if len(dense) != 2 or others:
            raise SystemExit(f"run.json's layers {kinds}: optim_parity.py knows Flatten -> Dense -> Dense only")
        self.names = [n for names in dense for n in names]  # kernel, bias, kernel, bias
        self.params = [torch.tensor(weights[n], dtype=dtype, requires_grad=True) for n in self.names]
        self.dtype = dtype

    def loss(self, x, y):
        w1, b1, w2, b2 = self.params
        h = torch.relu(x.reshape(x.shape[0], -1) @ w1 + b1)
        logits = h @ w2 + b2
        return -(y * torch.log_softmax(logits, dim=1)).sum(1).mean()

    def weights(self):
        return {n: p.detach().double().numpy() for n, p in zip(self.names, self.params)}


# ------------------------------------------------------------- schedules


def learning_rate(lr, iterations):
    """Keras' learning_rate (a number, or a schedule's config) at
    optimizer.iterations = iterations, as a float."""
    if not isinstance(lr, dict):
        return float(lr)
    name, c = lr["class_name"], lr["config"]
    if name == "ExponentialDecay":
        p = iterations / c["decay_steps"]
        if c.get("staircase"):
            p = math.floor(p)
        return c["initial_learning_rate"] * c["decay_rate"] ** p
    if name == "InverseTimeDecay":
        p = iterations / c["decay_steps"]
        if c.get("staircase"):
            p = math.floor(p)
        return c["initial_learning_rate"] / (1 + c["decay_rate"] * p)
    raise SystemExit(f"learning_rate schedule {name}: optim_parity.py implements ExponentialDecay and InverseTimeDecay")


def option(c, key):
    v = c.get(key)
    return float(v) if v else 0.0


# ------------------------------------------------------- Keras' clipping


class Clips:
    """Counts how often clipping changed a gradient (information)."""

    def __init__(self):
        self.tensors = self.total = 0  # tensor-steps scaled by clipnorm / global_clipnorm, of total
        self.values = self.values_total = 0  # gradient values clamped by clipvalue, of total

    def text(self, c):
        parts = []
        if option(c, "clipnorm") or option(c, "global_clipnorm"):
            what = "clipnorm" if option(c, "clipnorm") else "global_clipnorm"
            parts.append(f"{what} scaled {self.tensors} of {self.total} "
                         f"{'tensor' if what == 'clipnorm' else 'step'} gradients")
        if option(c, "clipvalue"):
            if self.values_total:
                parts.append(f"clipvalue clamped {self.values / self.values_total:.1%} of the gradient values")
            else:
                parts.append("clipvalue not applied (Keras applies only clipnorm when both are set)")
        return "; ".join(parts)


def keras_clip(c, grads, clips):
    """keras optimizer._clip_gradients: clipnorm, else global_clipnorm,
    else clipvalue (only the first that is set)."""
    cn, gn, cv = option(c, "clipnorm"), option(c, "global_clipnorm"), option(c, "clipvalue")
    if cn > 0:  # tf.clip_by_norm, each variable: g·cn / max(|g|, cn)
        out = []
        for g in grads:
            norm = float(torch.linalg.vector_norm(g.double()))
            clips.total += 1
            clips.tensors += norm > cn
            out.append(g * cn / max(norm, cn) if norm > cn else g)
        return out
    if gn > 0:  # tf.clip_by_global_norm: every g·gn / max(|all g|, gn)
        norm = math.sqrt(sum(float((g.double() ** 2).sum()) for g in grads))
        clips.total += 1
        clips.tensors += norm > gn
        return [g * (gn / max(norm, gn)) for g in grads] if norm > gn else grads
    if cv > 0:  # tf.clip_by_value
        clips.values += sum(int((g.abs() > cv).sum()) for g in grads)
        clips.values_total += sum(g.numel() for g in grads)
        return [g.clamp(-cv, cv) for g in grads]
    return grads


# ---------------------------------------------------------------- twins


class KerasTwin:
    """One Keras 2.11+ optimizer in torch tensors: its clipping, its
    decoupled weight decay, then its update rule as the TF formula or, where
    the arithmetic is the same, torch.optim (see the module's docstring)."""

    def __init__(self, config, params):
        self.cls, self.c, self.params = config["class_name"], config["config"], params
        self.it = 0  # optimizer.iterations
        self.clips = Clips()
        c, cls = self.c, self.cls
        self.torch = None
        if cls == "SGD" and (not isinstance(c["learning_rate"], dict) or not c["momentum"]):
            self.torch = torch.optim.SGD(params, lr=learning_rate(c["learning_rate"], 0),
                                         momentum=c["momentum"], nesterov=c["nesterov"])
            self.kind = (f"torch.optim.SGD(momentum={c['momentum']}, nesterov={c['nesterov']})"
                         + (", lr set each step from the schedule" if isinstance(c["learning_rate"], dict) else ""))
        elif cls == "Adadelta":
            self.torch = torch.optim.Adadelta(params, lr=learning_rate(c["learning_rate"], 0), rho=c["rho"], eps=c["epsilon"])
            self.kind = f"torch.optim.Adadelta(rho={c['rho']}, eps={c['epsilon']})"
        else:
            self.kind = f"TF formula ({cls})"
        if option(c, "clipnorm") or option(c, "global_clipnorm"):
            self.kind += " + TF clipping"
        if option(c, "weight_decay"):
            self.kind += " + Keras' decoupled weight decay"
        if isinstance(c["learning_rate"], dict):
            self.kind += f" + {c['learning_rate']['class_name']}"
        self.slots = [{} for _ in params]
        self.u_product = 1.0  # Nadam

    def step(self, grads):
        c = self.c
        lr = learning_rate(c["learning_rate"], self.it)
        t = self.it + 1  # Keras' local_step
        with torch.no_grad():
            grads = keras_clip(c, grads, self.clips)
            wd = option(c, "weight_decay")
            if wd:  # optimizer._apply_weight_decay: variable.assign_sub(variable * wd * lr)
                for p in self.params:
                    p.sub_(p * wd * lr)
            if self.torch is not None:
                for p, g in zip(self.params, grads):
                    p.grad = g.clone()
                for group in self.torch.param_groups:
                    group["lr"] = lr
                self.torch.step()
            else:
                coefs = self.coefficients(lr, t)
                for p, g, s in zip(self.params, grads, self.slots):
                    self.update(p, g, s, lr, coefs)
        self.it += 1

    def coefficients(self, lr, t):
        """The scalars of step t, as Python floats."""
        c = self.c
        if self.cls in ("Adam", "AdamW"):
            return {"alpha": lr * math.sqrt(1 - c["beta_2"] ** t) / (1 - c["beta_1"] ** t)}
        if self.cls == "Adamax":
            return {"corr": 1 - c["beta_1"] ** t}
        if self.cls == "Nadam":
            b1 = c["beta_1"]
            u_t = b1 * (1 - 0.5 * 0.96 ** t)
            u_t1 = b1 * (1 - 0.5 * 0.96 ** (t + 1))
            self.u_product *= u_t  # Keras' _u_product, once per step
            return {"u_t": u_t, "u_t1": u_t1, "prod": self.u_product, "prod1": self.u_product * u_t1,
                    "v_corr": 1 - c["beta_2"] ** t}
        return {}

    def update(self, p, g, s, lr, k):
        """keras/optimizers/optimizer_experimental/<class>.py update_step,
        dense gradients."""
        c, cls = self.c, self.cls
        zeros = lambda: torch.zeros_like(p)  # noqa: E731
        if cls == "SGD":  # with momentum and a schedule (the rest is torch.optim.SGD)
            m = s.setdefault("m", zeros())
            m.copy_(-g * lr + m * c["momentum"])
            p.add_(-g * lr + m * c["momentum"] if c["nesterov"] else m)
        elif cls in ("Adam", "AdamW"):
            m, v = s.setdefault("m", zeros()), s.setdefault("v", zeros())
            m.add_((g - m) * (1 - c["beta_1"]))
            v.add_((g * g - v) * (1 - c["beta_2"]))
            if c["amsgrad"]:
                vhat = s.setdefault("vhat", zeros())
                torch.maximum(vhat, v, out=vhat)
                v = vhat
            p.sub_((m * k["alpha"]) / (v.sqrt() + c["epsilon"]))
        elif cls == "RMSprop":
            rho = c["rho"]
            vel = s.setdefault("velocity", zeros())
            vel.copy_(rho * vel + (1 - rho) * (g * g))
            if c["centered"]:
                avg = s.setdefault("average_gradient", zeros())
                avg.copy_(rho * avg + (1 - rho) * g)
                den = vel - avg * avg + c["epsilon"]
            else:
                den = vel + c["epsilon"]
            inc = lr * g * torch.rsqrt(den)
            if c["momentum"] > 0:
                mom = s.setdefault("momentum", zeros())
                mom.copy_(c["momentum"] * mom + inc)
                p.sub_(mom)
            else:
                p.sub_(inc)
        elif cls == "Adagrad":
            acc = s.setdefault("accumulator", torch.full_like(p, c["initial_accumulator_value"]))
            acc.add_(g * g)
            p.sub_(lr * g / torch.sqrt(acc + c["epsilon"]))
        elif cls == "Adamax":
            m, u = s.setdefault("m", zeros()), s.setdefault("u", zeros())
            m.add_((g - m) * (1 - c["beta_1"]))
            torch.maximum(c["beta_2"] * u, g.abs(), out=u)
            p.sub_((lr * m) / (k["corr"] * (u + c["epsilon"])))
        elif cls == "Nadam":
            m, v = s.setdefault("m", zeros()), s.setdefault("v", zeros())
            m.add_((g - m) * (1 - c["beta_1"]))
            v.add_((g * g - v) * (1 - c["beta_2"]))
            m_hat = k["u_t1"] * m / (1 - k["prod1"]) + (1 - k["u_t"]) * g / (1 - k["prod"])
            v_hat = v / k["v_corr"]
            p.sub_((m_hat * lr) / (v_hat.sqrt() + c["epsilon"]))
        else:
            raise SystemExit(f"optimizer {cls}: optim_parity.py has no twin for it")


class TorchOwn:
    """The control: PyTorch's own optimizer for the same Keras arguments,
    with PyTorch's arithmetic (its epsilon placements, coupled
    weight_decay, clip_grad_norm_, LR set from the schedule each step, as a
    LambdaLR would), or None where the twin is that already."""

    @staticmethod
    def make(config, params):
        cls, c = config["class_name"], config["config"]
        lr0 = learning_rate(c["learning_rate"], 0)
        wd = option(c, "weight_decay")
        betas = (c.get("beta_1"), c.get("beta_2"))
        if cls == "SGD":
            opt = torch.optim.SGD(params, lr=lr0, momentum=c["momentum"], nesterov=c["nesterov"], weight_decay=wd)
            desc = f"torch.optim.SGD(momentum={c['momentum']}, nesterov={c['nesterov']}" + (f", weight_decay={wd}" if wd else "") + ")"
        elif cls == "Adam":
            opt = torch.optim.Adam(params, lr=lr0, betas=betas, eps=c["epsilon"], amsgrad=c["amsgrad"], weight_decay=wd)
            desc = f"torch.optim.Adam(eps={c['epsilon']}, amsgrad={c['amsgrad']}" + (f", weight_decay={wd}" if wd else "") + ")"
        elif cls == "AdamW":
            opt = torch.optim.AdamW(params, lr=lr0, betas=betas, eps=c["epsilon"], amsgrad=c["amsgrad"], weight_decay=wd)
            desc = f"torch.optim.AdamW(eps={c['epsilon']}, weight_decay={wd})"
        elif cls == "RMSprop":
            opt = torch.optim.RMSprop(params, lr=lr0, alpha=c["rho"], eps=c["epsilon"], momentum=c["momentum"],
                                      centered=c["centered"], weight_decay=wd)
            desc = (f"torch.optim.RMSprop(alpha={c['rho']}, eps={c['epsilon']}, momentum={c['momentum']}, "
                    f"centered={c['centered']}" + (f", weight_decay={wd}" if wd else "") + ")")
        elif cls == "Adagrad":
            opt = torch.optim.Adagrad(params, lr=lr0, eps=c["epsilon"], initial_accumulator_value=c["initial_accumulator_value"],
                                      weight_decay=wd)
            desc = f"torch.optim.Adagrad(eps={c['epsilon']}, initial_accumulator_value={c['initial_accumulator_value']})"
        elif cls == "Adadelta":
            opt = torch.optim.Adadelta(params, lr=lr0, rho=c["rho"], eps=c["epsilon"], weight_decay=wd)
            desc = "torch.optim.Adadelta"
        elif cls == "Adamax":
            opt = torch.optim.Adamax(params, lr=lr0, betas=betas, eps=c["epsilon"], weight_decay=wd)
            desc = f"torch.optim.Adamax(eps={c['epsilon']})"
        elif cls == "Nadam":
            opt = torch.optim.NAdam(params, lr=lr0, betas=betas, eps=c["epsilon"], weight_decay=wd)
            desc = f"torch.optim.NAdam(eps={c['epsilon']}, momentum_decay=0.004 (its default))"
        else:
            return None
        cn, gn, cv = option(c, "clipnorm"), option(c, "global_clipnorm"), option(c, "clipvalue")
        clip = []
        if cn:
            clip.append(f"clip_grad_norm_(each parameter, {cn})")
        if gn:
            clip.append(f"clip_grad_norm_(all parameters, {gn})")
        if cv:
            clip.append(f"clip_grad_value_({cv})")
        desc = " + ".join(clip + [desc])
        if isinstance(c["learning_rate"], dict):
            desc += f", lr = {c['learning_rate']['class_name']}(step) each step"
        # The same arithmetic as the twin: nothing to show.
        same = (cls == "Adadelta" or cls == "SGD" and not wd and not cn and not gn
                and (not isinstance(c["learning_rate"], dict) or not c["momentum"]))
        if same:
            return None
        return TorchOwn(opt, c, params, desc)

    def __init__(self, opt, c, params, desc):
        self.opt, self.c, self.params, self.desc, self.it = opt, c, params, desc, 0

    def step(self, grads):
        c = self.c
        for p, g in zip(self.params, grads):
            p.grad = g.clone()
        if option(c, "clipnorm"):
            for p in self.params:
                torch.nn.utils.clip_grad_norm_([p], option(c, "clipnorm"))
        if option(c, "global_clipnorm"):
            torch.nn.utils.clip_grad_norm_(self.params, option(c, "global_clipnorm"))
        if option(c, "clipvalue"):
            torch.nn.utils.clip_grad_value_(self.params, option(c, "clipvalue"))
        for group in self.opt.param_groups:
            group["lr"] = learning_rate(c["learning_rate"], self.it)
        self.opt.step()
        self.it += 1


def train(run, config, initial, batches, dtype, own=False):
    """Trains a twin (or, with own, PyTorch's own optimizer) on the batches;
    returns (losses, final weights, twin) or None when own has nothing to
    show."""
    model = Model(run, initial, dtype)
    opt = TorchOwn.make(config, model.params) if own else KerasTwin(config, model.params)
    if opt is None:
        return None
    losses = []
    for x, y in batches:
        loss = model.loss(x.to(dtype), y.to(dtype))
        grads = torch.autograd.grad(loss, model.params)
        opt.step(list(grads))
        losses.append(loss.item())
    return losses, model.weights(), opt


# ----------------------------------------------------------------- check


def check(go, l32, l64, early_tol, factor, n_early=10):
    """The two criteria; returns a dict of the figures."""
    k = min(n_early, len(go))
    early = max(abs(g - a) / abs(a) for g, a in zip(go[:k], l32[:k]))
    early64 = max(abs(g - a) / abs(a) for g, a in zip(go[:k], l64[:k]))
    d_go64 = max(abs(g - b) for g, b in zip(go, l64))
    d_go32 = max(abs(g - a) for g, a in zip(go, l32))
    d_3264 = max(abs(a - b) for a, b in zip(l32, l64))
    bound = factor * d_3264 + early_tol * max(abs(b) for b in l64)
    ok_early = early <= early_tol
    ok_drift = d_go64 <= bound
    return {"early": early, "early64": early64, "d_go64": d_go64, "d_go32": d_go32, "d_3264": d_3264,
            "bound": bound, "ok_early": ok_early, "ok_drift": ok_drift, "ok": ok_early and ok_drift}


def worst_weight(a, b):
    """max over tensors of max|a - b| / max|b|, and the tensor."""
    return max((float(np.max(np.abs(a[k].astype(np.float64) - b[k]))) / float(np.max(np.abs(b[k]))), k) for k in b)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir", help="the directory bench/optimparity wrote")
    p.add_argument("--configs", default="", help="comma-separated configuration names (default: all in run.json)")
    p.add_argument("--early-tolerance", type=float, default=1e-6,
                   help="largest relative loss difference from the float32 twin over steps 1-10 (default 1e-6)")
    p.add_argument("--drift-factor", type=float, default=2.0,
                   help="gokeras may be this many times as far from the float64 twin as the float32 twin is (default 2)")
    p.add_argument("--table", action="store_true", help="print every step's losses of every configuration")
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args()
    torch.set_num_threads(a.threads)

    with open(os.path.join(a.dir, "run.json")) as f:
        run = json.load(f)
    steps, batch, n = run["steps"], run["batch_size"], run["samples"]
    shape, classes = run["input_shape"], run["classes"]
    size = int(np.prod(shape))
    images = np.fromfile(os.path.join(a.dir, "images.f32"), dtype="<f4")
    labels = np.fromfile(os.path.join(a.dir, "labels.f32"), dtype="<f4")
    if images.size != n * size or labels.size != n * classes or n < steps * batch:
        raise SystemExit(f"images.f32 / labels.f32 hold {images.size} / {labels.size} values, "
                         f"want {n * size} / {n * classes} for {steps} batches of {batch}")
    x_all = torch.from_numpy(images.reshape([n] + shape))
    y_all = torch.from_numpy(labels.reshape(n, classes))
    batches = [(x_all[s * batch:(s + 1) * batch], y_all[s * batch:(s + 1) * batch]) for s in range(steps)]
    initial = read_safetensors(os.path.join(a.dir, "initial.safetensors"))
    configs = run["configs"]
    if a.configs:
        want = [s.strip() for s in a.configs.split(",") if s.strip()]
        unknown = [w for w in want if w not in {c["name"] for c in configs}]
        if unknown:
            raise SystemExit(f"--configs: {unknown} not in run.json")
        configs = [c for c in configs if c["name"] in want]

    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s); model: "
          f"{' -> '.join(l['type'] for l in run['layers'])} ({sum(int(np.prod(w.shape)) for w in initial.values())} weights), "
          f"input {tuple(shape)}, {classes} classes; {steps} steps of batch {batch}, no shuffle, gokeras on {run['device']}")
    print(f"gokeras per-step loss: {run['loss_method']}")
    print(f"check: (1) steps 1-{min(10, steps)}: max |L_go - L_32| / |L_32| <= {a.early_tolerance:g}; "
          f"(2) steps 1-{steps}: max |L_go - L_64| <= {a.drift_factor:g} * max |L_32 - L_64| + {a.early_tolerance:g} * max |L_64| "
          f"(L_32, L_64: the twin in float32, float64)")

    results = []
    for cfg in configs:
        name, opt = cfg["name"], cfg["optimizer"]
        go = cfg["losses"]
        if len(go) != steps:
            raise SystemExit(f"{name}: {len(go)} losses, want {steps}")
        l32, w32, twin = train(run, opt, initial, batches, torch.float32)
        l64, w64, twin64 = train(run, opt, initial, batches, torch.float64)
        r = check(go, l32, l64, a.early_tolerance, a.drift_factor)
        own = train(run, opt, initial, batches, torch.float32, own=True)
        w_go = read_safetensors(os.path.join(a.dir, f"{name}.final.safetensors"))
        print()
        print(f"======== {name}: {opt['class_name']}, {cfg['note']}")
        print(f"  twin: {twin.kind}")
        moves = max(abs(x - y) for x, y in zip(l64, l64[1:])) if steps > 1 else 0
        print(f"  loss (gokeras): step 1 {go[0]:.7f}, step {min(10, steps)} {go[min(10, steps) - 1]:.7f}, step {steps} "
              f"{go[-1]:.7f}; largest change between steps {moves:.3g}")
        clip = twin64.clips.text(opt["config"])
        if clip:
            print(f"  clipping (float64 twin): {clip}")
        print(f"  (1) steps 1-{min(10, steps)}: max rel |go - twin32| = {r['early']:.2e} (tolerance {a.early_tolerance:g}) "
              f"{'ok' if r['ok_early'] else 'BEYOND'}; vs twin64 {r['early64']:.2e}")
        print(f"  (2) steps 1-{steps}: max |go - twin64| = {r['d_go64']:.2e}, bound {r['bound']:.2e} "
              f"(max |twin32 - twin64| = {r['d_3264']:.2e}; ratio {r['d_go64'] / r['d_3264'] if r['d_3264'] else float('inf'):.2f}) "
              f"{'ok' if r['ok_drift'] else 'BEYOND'}; max |go - twin32| = {r['d_go32']:.2e}")
        wg, kg = worst_weight(w_go, w64)
        w3, k3 = worst_weight({k: v.astype(np.float32) for k, v in w32.items()}, w64)
        print(f"  weights after step {steps}, max|diff| / max|w| against twin64: gokeras {wg:.2e} ({kg}), twin32 {w3:.2e} ({k3})")
        if own is not None:
            lo, _, o = own
            ro = check(lo, l32, l64, a.early_tolerance, a.drift_factor)
            print(f"  control, PyTorch's own arithmetic, float32: {o.desc}: steps 1-{min(10, steps)} max rel vs twin32 "
                  f"{ro['early']:.2e}, steps 1-{steps} max |own - twin64| = {ro['d_go64']:.2e} (bound {ro['bound']:.2e}): "
                  f"{'would pass: the difference is below this check' if ro['ok'] else 'would FAIL: the check sees the difference'}")
        if a.table or not r["ok"]:
            print(f"  {'step':>4}  {'gokeras':>12}  {'twin32':>12}  {'twin64':>12}  {'|go-64|':>9}  {'|32-64|':>9}")
            for i in range(steps):
                print(f"  {i + 1:>4}  {go[i]:>12.8f}  {l32[i]:>12.8f}  {l64[i]:>12.8f}  {abs(go[i] - l64[i]):>9.2e}  "
                      f"{abs(l32[i] - l64[i]):>9.2e}")
        results.append((name, opt["class_name"], r))

    print()
    print("======== summary")
    print(f"{'configuration':<32} {'optimizer':<9} {'(1) rel 1-10':>12} {'|go-64|':>9} {'|32-64|':>9} {'bound':>9}  result")
    for name, cls, r in results:
        print(f"{name:<32} {cls:<9} {r['early']:>12.2e} {r['d_go64']:>9.2e} {r['d_3264']:>9.2e} {r['bound']:>9.2e}  "
              f"{'PASS' if r['ok'] else 'FAIL'}")
    print()
    for name, cls, r in results:
        why = []
        if not r["ok_early"]:
            why.append(f"steps 1-10 relative {r['early']:.2e} > {a.early_tolerance:g}")
        if not r["ok_drift"]:
            why.append(f"max |go - twin64| {r['d_go64']:.2e} > bound {r['bound']:.2e}")
        print(f"{'PASS' if r['ok'] else 'FAIL'}: {name} ({cls})" + (": " + "; ".join(why) if why else ""))
    sys.exit(0 if all(r["ok"] for _, _, r in results) else 1)


if __name__ == "__main__":
    main()
