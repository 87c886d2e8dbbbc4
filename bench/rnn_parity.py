#!/usr/bin/env python3
"""Checks gokeras' SimpleRNN, LSTM and GRU against PyTorch's nn.RNN,
nn.LSTM and nn.GRU given the same weights.

Reads the JSON bench/rnnparity wrote (go run ./bench/rnnparity --out F):
per case, the layer's weights in Keras' layout (kernel (features,
G*units), recurrent_kernel (units, G*units), bias), a batch of sequences,
a target, and what gokeras computed: the output and the gradients of the
mean squared error in float64 (the layer's graph on gorgonia's tape
machine), the output in float32 (a model predicting on the device given:
/CPU:0, or /GPU:0 in a build with -tags cudavm), and the
losses and final weights of a few SGD steps of that model.

THE MAPPING. PyTorch keeps each weight transposed, (G*units, features).
LSTM: Keras' gates i, f, c, o are PyTorch's i, f, g, o, in that order.
GRU: Keras' z, r, h are PyTorch's r, z, n: the first two blocks swap;
Keras' reset_after=True GRU is PyTorch's (the reset gate multiplies
h*W_hn + b_hn), its bias rows are PyTorch's bias_ih and bias_hh. LSTM and
SimpleRNN have one bias: PyTorch's bias_ih, its bias_hh held at 0.
go_backwards: the twin reads the sequence flipped in time and returns its
outputs in that order, as Keras does.

MASKS (cases with "lengths": sample i keeps its first lengths[i mod 4]
steps, the rest zero padding that gokeras masks): the twin runs each
sample alone on its own steps (its per-sample length), and lays its
outputs out as Keras 2 does with a mask: read forwards, a padded step
repeats the last real output; read backwards (the padding read first),
the padded steps output zero, then come the twin's outputs over the
flipped real steps. The last output is the last real step's; the states
(return_state) are the twin's final h_n (and c_n).
RETURN_STATE: the output, then h (and c), each flattened, side by side.

BIDIRECTIONAL (cases with a merge_mode; "" is Keras' None): the twin is
PyTorch's module with bidirectional=True, its _reverse weights the Keras
backward layer's (forward_*, then backward_* in Keras' list). Its
per-step output is forward then reverse, each aligned with the steps, as
Keras puts the backward sequence back in order; the last outputs are
h_n[0] and h_n[1]. Merged as Keras merges: concat per step, sum, mul,
ave; None gives both, side by side. With a mask the reverse half reads
the real steps only, and both halves output zero at the padded steps
(Keras' Bidirectional forces zero_output_for_mask with return_sequences).
States: forward h (c), then backward h (c).

THE CHECKS (relative error: max |gokeras - twin| / max |twin|):
  - float64 output and each gradient (input, kernel, recurrent kernel,
    bias) against the float64 twin: <= 1e-10;
  - float32 output against the float64 twin: <= 1e-5, overall and at
    each timestep (return_sequences);
  - each SGD step's loss (relative to the twin's) and the final weights
    against a float64 twin trained on the same batches: <= 1e-5.
Prints one line per check and PASS or FAIL per case; exits 1 on a
failure.
"""
import json
import sys

import numpy as np
import torch

F64_TOL = 1e-10
F32_TOL = 1e-5


def rel(a, b):
    a = np.asarray(a, dtype=np.float64).reshape(-1)
    b = np.asarray(b, dtype=np.float64).reshape(-1)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def gru_order(w, units):
    """Keras' z, r, h blocks along the last axis -> PyTorch's r, z, n (and back)."""
    u = units
    return np.concatenate([w[..., u:2 * u], w[..., 0:u], w[..., 2 * u:3 * u]], axis=-1)


def bidirectional(case):
    return case.get("merge_mode") is not None


def make_twin(case, settings, dtype):
    cls, f, u = case["class"], settings["Features"], settings["Units"]
    bi = bidirectional(case)
    if cls == "LSTM":
        mod = torch.nn.LSTM(f, u, batch_first=True, bidirectional=bi)
    elif cls == "GRU":
        mod = torch.nn.GRU(f, u, batch_first=True, bidirectional=bi)
    else:
        mod = torch.nn.RNN(f, u, nonlinearity="tanh", batch_first=True, bidirectional=bi)
    return mod.to(dtype)


def directions(case):
    return ["_l0", "_l0_reverse"] if bidirectional(case) else ["_l0"]


def set_weights(mod, case, settings, weights):
    u = settings["Units"]
    gru = case["class"] == "GRU"
    for d, sfx in enumerate(directions(case)):
        kernel, rec, bias = weights[3 * d], weights[3 * d + 1], weights[3 * d + 2]
        if gru:
            kernel, rec = gru_order(kernel, u), gru_order(rec, u)
        p = lambda name: getattr(mod, name + sfx)
        dt = p("weight_ih").dtype
        with torch.no_grad():
            p("weight_ih").copy_(torch.tensor(kernel.T, dtype=dt))
            p("weight_hh").copy_(torch.tensor(rec.T, dtype=dt))
            if gru:
                p("bias_ih").copy_(torch.tensor(gru_order(bias[0], u), dtype=dt))
                p("bias_hh").copy_(torch.tensor(gru_order(bias[1], u), dtype=dt))
            else:
                p("bias_ih").copy_(torch.tensor(bias, dtype=dt))
                p("bias_hh").zero_()


def keras_weights(mod, case, settings, grad=False):
    """The module's weights (or their gradients) in Keras' layout."""
    u = settings["Units"]
    get = (lambda p: p.grad) if grad else (lambda p: p.detach())
    out = []
    for sfx in directions(case):
        p = lambda name: get(getattr(mod, name + sfx)).double().numpy()
        kernel, rec = p("weight_ih").T, p("weight_hh").T
        if case["class"] == "GRU":
            bias = np.stack([gru_order(p("bias_ih"), u), gru_order(p("bias_hh"), u)])
            out += [gru_order(kernel, u), gru_order(rec, u), bias]
        else:
            out += [kernel, rec, p("bias_ih")]
    return out


def forward(mod, case, x):
    """The layer's output, (batch, units) or flattened (batch, steps*units),
    then with return_state its last states, flattened."""
    lengths = case.get("lengths") or []
    if bidirectional(case):
        return forward_bi(mod, case, x, lengths)
    if not lengths:
        return join(case, *run(mod, case, x))
    rows = []
    t = x.shape[1]
    for b in range(x.shape[0]):
        n = lengths[b % len(lengths)]
        out, states = run(mod, case, x[b:b + 1, :n])  # out (1, n, units)
        if case["go_backwards"]:
            pad = torch.zeros(1, t - n, out.shape[2], dtype=out.dtype)
            out = torch.cat([pad, out], dim=1)
        else:
            out = torch.cat([out, out[:, n - 1:n].expand(1, t - n, out.shape[2])], dim=1)
        rows.append(join(case, out, states, last=states[0]))
    return torch.cat(rows, dim=0)


def forward_bi(mod, case, x, lengths):
    """A bidirectional twin's merged output (and states), per sample when
    masked."""
    t = x.shape[1]
    rows = []
    samples = [(b, lengths[b % len(lengths)] if lengths else t) for b in range(x.shape[0])]
    if not lengths:
        samples = [(slice(None), t)]
    for b, n in samples:
        xb = x[b:b + 1, :n] if lengths else x
        out, st = mod(xb)  # out (rows, n, 2u)
        u = out.shape[2] // 2
        fo, bo = out[..., :u], out[..., u:]
        if n < t:  # zero output at the padded steps (zero_output_for_mask, which Bidirectional forces)
            fo = torch.cat([fo, torch.zeros(fo.shape[0], t - n, u, dtype=fo.dtype)], dim=1)
            bo = torch.cat([bo, torch.zeros(bo.shape[0], t - n, u, dtype=bo.dtype)], dim=1)
        hs = st if isinstance(st, tuple) else (st,)
        if case["return_sequences"]:
            yf, yb = fo, bo
        else:
            yf, yb = hs[0][0], hs[0][1]
        mode = case["merge_mode"]
        if mode == "concat":
            y = torch.cat([yf, yb], dim=-1).reshape(yf.shape[0], -1)
        elif mode == "":
            y = torch.cat([yf.reshape(yf.shape[0], -1), yb.reshape(yb.shape[0], -1)], dim=1)
        else:
            y = {"sum": yf + yb, "mul": yf * yb, "ave": (yf + yb) / 2}[mode].reshape(yf.shape[0], -1)
        if case.get("return_state"):
            y = torch.cat([y] + [h[0] for h in hs] + [h[1] for h in hs], dim=1)
        rows.append(y)
    return torch.cat(rows, dim=0)


def run(mod, case, x):
    """The twin over x (read flipped with go_backwards): its outputs in the
    order read and its last states, each (batch, units)."""
    xin = torch.flip(x, [1]) if case["go_backwards"] else x
    out, st = mod(xin)
    states = [st[0][0], st[1][0]] if isinstance(st, tuple) else [st[0]]
    return out, states


def join(case, out, states, last=None):
    y = out.reshape(out.shape[0], -1) if case["return_sequences"] else (out[:, -1] if last is None else last)
    if case.get("return_state"):
        return torch.cat([y] + states, dim=1)
    return y


def check_case(case, s):
    b, t, f, u = s["Batch"], s["Steps"], s["Features"], s["Units"]
    weights = [np.array(w, dtype=np.float32).reshape(sh) for w, sh in zip(case["weights"], case["shapes"])]
    lines, ok = [], True

    def report(what, err, tol):
        nonlocal ok
        good = err <= tol
        ok = ok and good
        lines.append(f"  {what:<46} {err:.3e}  (<= {tol:g}) {'ok' if good else 'FAIL'}")

    # float64: output and gradients.
    mod = make_twin(case, s, torch.float64)
    set_weights(mod, case, s, [w.astype(np.float64) for w in weights])
    x = torch.tensor(np.array(case["x"], dtype=np.float32).reshape(b, t, f), dtype=torch.float64, requires_grad=True)
    y = forward(mod, case, x)
    target = torch.tensor(np.array(case["target"]).reshape(y.shape), dtype=torch.float64)
    loss = ((y - target) ** 2).mean()
    loss.backward()
    twin_out = y.detach().numpy()
    report("float64 output", rel(case["out64"], twin_out), F64_TOL)
    report("float64 loss", rel([case["loss64"]], [loss.item()]), F64_TOL)
    grads = [x.grad.numpy()] + keras_weights(mod, case, s, grad=True)
    names = ["input", "kernel", "recurrent_kernel", "bias"]
    if bidirectional(case):
        names = ["input"] + [d + w for d in ("forward ", "backward ") for w in names[1:]]
    for name, got, want in zip(names, case["grads64"], grads):
        report(f"float64 gradient of the {name}", rel(got, want), F64_TOL)
    out32 = np.array(case["out32"]).reshape(twin_out.shape)
    report(f"float32 output ({s['Device']} model) vs float64 twin", rel(out32, twin_out), F32_TOL)
    if case["return_sequences"] and not bidirectional(case):
        seq32, seq64 = out32[:, :t * u].reshape(b, t, u), twin_out[:, :t * u].reshape(b, t, u)
        per = [rel(seq32[:, k], seq64[:, k]) for k in range(t)]
        report(f"float32 output, worst of the {t} timesteps", max(per), F32_TOL)

    # Training: SGD on the same batches, float64 twin (float32 for scale).
    cols = len(case["target"]) // b
    n = s["TrainSteps"] * b
    tx = np.array(case["train_x"], dtype=np.float32).reshape(n, t, f)
    ty = np.array(case["train_y"], dtype=np.float32).reshape(n, cols)
    finals = {}
    for dt in (torch.float64, torch.float32):
        mod = make_twin(case, s, dt)
        set_weights(mod, case, s, weights)
        opt = torch.optim.SGD(mod.parameters(), lr=s["LearningRate"])
        losses = []
        for k in range(s["TrainSteps"]):
            xb = torch.tensor(tx[k * b:(k + 1) * b], dtype=dt)
            yb = torch.tensor(ty[k * b:(k + 1) * b], dtype=dt)
            opt.zero_grad()
            l = ((forward(mod, case, xb) - yb) ** 2).mean()
            l.backward()
            if case["class"] != "GRU":
                for sfx in directions(case):  # Keras' one bias is bias_ih; bias_hh stays 0
                    getattr(mod, "bias_hh" + sfx).grad = None
            opt.step()
            losses.append(l.item())
        finals[dt] = (losses, keras_weights(mod, case, s))
    losses64, w64 = finals[torch.float64]
    losses32, w32 = finals[torch.float32]
    step_err = max(abs(a - c) / abs(c) for a, c in zip(case["losses32"], losses64))
    report(f"float32 losses of {s['TrainSteps']} SGD steps vs float64 twin", step_err, F32_TOL)
    scale = max(abs(a - c) / abs(c) for a, c in zip(losses32, losses64))
    lines.append(f"  {'(PyTorch float32 vs float64, for scale)':<46} {scale:.3e}")
    final = np.array(case["final32"], dtype=object)
    wnames = ["kernel", "recurrent_kernel", "bias"]
    if bidirectional(case):
        wnames = [d + w for d in ("forward ", "backward ") for w in wnames]
    for i, name in enumerate(wnames):
        report(f"float32 {name} after the steps vs float64 twin",
               rel(np.array(case["final32"][i]), w64[i]), F32_TOL)
    return ok, lines


def main():
    if len(sys.argv) != 2:
        print("usage: rnn_parity.py RUN.json", file=sys.stderr)
        return 2
    with open(sys.argv[1]) as fh:
        run = json.load(fh)
    s = run["settings"]
    torch.set_num_threads(1)
    print(f"batch {s['Batch']}, {s['Steps']} timesteps of {s['Features']} features, {s['Units']} units; "
          f"SGD lr {s['LearningRate']} for {s['TrainSteps']} steps on {s['Device']}")
    failed = []
    for case in run["cases"]:
        ok, lines = check_case(case, s)
        extra = ""
        if case.get("lengths"):
            extra += f", masked: lengths {case['lengths']} of {s['Steps']}"
        if case.get("return_state"):
            extra += ", return_state"
        if bidirectional(case):
            extra += f", Bidirectional merge_mode={case['merge_mode'] or None}"
        print(f"\n{case['name']} ({case['class']}, return_sequences={case['return_sequences']}, go_backwards={case['go_backwards']}{extra})")
        print("\n".join(lines))
        print(("PASS " if ok else "FAIL ") + case["name"])
        if not ok:
            failed.append(case["name"])
    print()
    print("all cases pass" if not failed else f"FAILED: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
