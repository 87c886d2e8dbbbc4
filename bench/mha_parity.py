#!/usr/bin/env python3
"""Checks gokeras' MultiHeadAttention against PyTorch's
nn.MultiheadAttention given the same weights.

Reads the JSON bench/mhaparity wrote (go run ./bench/mhaparity --out F):
per case, the layer's weights in Keras' layout, a batch of inputs, a
target, and what gokeras computed: the output, the attention scores and
the gradients of the mean squared error in float64 (the layer's graph on
gorgonia's tape machine), the output in float32 (a model predicting on
the device given), and the losses and final weights of a few SGD steps of
that model.

THE MAPPING. Keras keeps each projection as a kernel (features, heads,
dim) and a bias (heads, dim); PyTorch as a weight (heads*dim, features),
the heads one after another, and a bias of heads*dim: the kernel reshaped
to (features, heads*dim) and transposed. Keras' attention_output/kernel
(heads, dim, out) is out_proj.weight transposed the same way. PyTorch
scales the query by 1/sqrt(head_dim), as Keras does by 1/sqrt(key_dim).
The attention mask (1 = attend) is given to PyTorch as an additive float
mask, (1 - mask) * -1e9 per sample and head, which is what Keras adds;
the causal mask is folded into it. Scores are PyTorch's per-head weights
(average_attn_weights=False).

THE CHECKS (relative error: max |gokeras - twin| / max |twin|):
  - float64 output, scores and each gradient (each input but a mask, each
    weight) against the float64 twin: <= 1e-10;
  - float32 output against the float64 twin: <= 1e-5;
  - each SGD step's loss and the final weights against a float64 twin
    trained on the same batches: <= 1e-5.
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
    """Relative error; against 1e-6 where the twin's values are all below it
    (the key bias's gradient, which softmax makes zero)."""
    a = np.asarray(a, dtype=np.float64).reshape(-1)
    b = np.asarray(b, dtype=np.float64).reshape(-1)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-6))


def f32(v):
    """Values gokeras holds in float32, exactly (JSON writes them as the
    shortest decimal that reads back as the same float32)."""
    return np.asarray(v, dtype=np.float32).astype(np.float64)


class Twin:
    """nn.MultiheadAttention holding a Keras layer's weights."""

    def __init__(self, case, weights, dtype):
        h, k = case["heads"], case["key_dim"]
        e = h * k
        if case["dq"] != e:
            raise ValueError("PyTorch needs the query to have heads*key_dim features")
        self.case = case
        self.mod = torch.nn.MultiheadAttention(e, h, bias=True, batch_first=True, kdim=case["dk"] if case["key"] else case["dv"],
                                               vdim=case["dv"], dtype=dtype)
        self.dtype = dtype
        self.load(weights)

    def load(self, weights):
        c, m = self.case, self.mod
        qk, qb, kk, kb, vk, vb, ok, ob = [f32(w) for w in weights]
        e = c["heads"] * c["key_dim"]
        t = lambda a: torch.tensor(a, dtype=self.dtype)
        with torch.no_grad():
            qw = qk.reshape(-1, e).T
            kw = kk.reshape(-1, e).T
            vw = vk.reshape(-1, e).T
            if m._qkv_same_embed_dim:
                m.in_proj_weight.copy_(t(np.concatenate([qw, kw, vw], axis=0)))
            else:
                m.q_proj_weight.copy_(t(qw))
                m.k_proj_weight.copy_(t(kw))
                m.v_proj_weight.copy_(t(vw))
            m.in_proj_bias.copy_(t(np.concatenate([qb.reshape(-1), kb.reshape(-1), vb.reshape(-1)])))
            m.out_proj.weight.copy_(t(ok.reshape(e, -1).T))
            m.out_proj.bias.copy_(t(ob))

    def keras_weights(self):
        """The module's weights and their gradients back in Keras' layout (Keras' order)."""
        c, m = self.case, self.mod
        h, k = c["heads"], c["key_dim"]
        e = h * k

        def values(get):
            if m._qkv_same_embed_dim:
                qw, kw, vw = [get(m.in_proj_weight)[i * e:(i + 1) * e] for i in range(3)]
            else:
                qw, kw, vw = get(m.q_proj_weight), get(m.k_proj_weight), get(m.v_proj_weight)
            b = get(m.in_proj_bias)
            ow, ob = get(m.out_proj.weight), get(m.out_proj.bias)
            return [qw.T.reshape(-1, h, k), b[:e].reshape(h, k), kw.T.reshape(-1, h, k), b[e:2 * e].reshape(h, k),
                    vw.T.reshape(-1, h, k), b[2 * e:].reshape(h, k), ow.T.reshape(h, k, -1), ob]

        w = values(lambda p: p.detach().numpy())
        g = values(lambda p: p.grad.detach().numpy())
        return w, g

    def __call__(self, q, v, key, mask):
        c = self.case
        b, tq, tv, h = q.shape[0], c["tq"], c["tv"], c["heads"]
        attn = None
        allowed = np.ones((b, tq, tv))
        if mask is not None:
            allowed = allowed * mask
        if c["causal"]:
            allowed = allowed * np.tril(np.ones((tq, tv)))
        if mask is not None or c["causal"]:
            add = (1.0 - allowed) * -1e9
            attn = torch.tensor(np.repeat(add, h, axis=0), dtype=self.dtype)
        return self.mod(q, key if key is not None else v, v, attn_mask=attn, need_weights=True, average_attn_weights=False)


def inputs_of(case, flat, batch, dtype, grad):
    """The layer's query, value, key and mask from the sources (a self-attention's one input once)."""
    tq, tv = case["tq"], case["tv"]
    srcs = list(flat)
    mask = None
    if case["mask"]:
        mask = f32(srcs.pop()).reshape(batch, tq, tv)
    ts = []
    for s in srcs:
        a = f32(s)
        ts.append(torch.tensor(a, dtype=dtype, requires_grad=grad))
    if case["self"]:
        x = ts[0].reshape(batch, tq, case["dq"])
        return ts, x, x, None, mask
    q = ts[0].reshape(batch, tq, case["dq"])
    v = ts[1].reshape(batch, tv, case["dv"])
    key = ts[2].reshape(batch, tv, case["dk"]) if case["key"] else None
    return ts, q, v, key, mask


def check(name, err, tol, report):
    ok = err <= tol
    print(f"  {name:<34} {err:.3e} (<= {tol:g}) {'ok' if ok else 'FAIL'}")
    report.append(ok)


def run_case(c, s):
    report = []
    print(f"{c['name']}: heads {c['heads']}, key_dim {c['key_dim']}, query ({c['tq']}, {c['dq']}), value ({c['tv']}, {c['dv']})"
          + (f", key ({c['tv']}, {c['dk']})" if c["key"] else "") + (", attention mask" if c["mask"] else "")
          + (", causal" if c["causal"] else ""))
    b = c["batch"]
    twin = Twin(c, c["weights"], torch.float64)
    ts, q, v, key, mask = inputs_of(c, c["inputs"], b, torch.float64, True)
    out, scores = twin(q, v, key, mask)
    target = torch.tensor(np.asarray(c["target"]).reshape(b, -1), dtype=torch.float64)
    loss = torch.mean((out.reshape(b, -1) - target) ** 2)
    loss.backward()
    check("float64 output", rel(c["out64"], out.detach().numpy()), F64_TOL, report)
    check("float64 scores", rel(c["scores64"], scores.detach().numpy()), F64_TOL, report)
    check("float64 loss", rel([c["loss64"]], [loss.item()]), F64_TOL, report)
    grads = c["grads64"]
    for i, t in enumerate(ts):
        check(f"float64 gradient of input {i}", rel(grads[i], t.grad.numpy()), F64_TOL, report)
    _, wg = twin.keras_weights()
    names = ["query/kernel", "query/bias", "key/kernel", "key/bias", "value/kernel", "value/bias",
             "attention_output/kernel", "attention_output/bias"]
    for i, g in enumerate(wg):
        check(f"float64 gradient of {names[i]}", rel(grads[len(ts) + i], g), F64_TOL, report)
    check("float32 output", rel(c["out32"], out.detach().numpy()), F32_TOL, report)

    # SGD on the same batches, in order.
    twin = Twin(c, c["weights"], torch.float64)
    opt = torch.optim.SGD(twin.mod.parameters(), lr=s["LearningRate"])
    steps = s["TrainSteps"]
    per = [f32(x) for x in c["train_inputs"]]
    ys = f32(c["train_y"]).reshape(steps * b, -1)
    worst = 0.0
    for step in range(steps):
        batch = [x.reshape(steps * b, -1)[step * b:(step + 1) * b].reshape(-1) for x in per]
        _, q, v, key, mask = inputs_of(c, batch, b, torch.float64, False)
        opt.zero_grad()
        out, _ = twin(q, v, key, mask)
        y = torch.tensor(ys[step * b:(step + 1) * b], dtype=torch.float64)
        l = torch.mean((out.reshape(b, -1) - y) ** 2)
        l.backward()
        opt.step()
        worst = max(worst, abs(c["losses32"][step] - l.item()) / abs(l.item()))
    check(f"float32 SGD losses ({steps} steps)", worst, F32_TOL, report)
    final, _ = twin.keras_weights()
    for i, w in enumerate(final):
        check(f"float32 SGD final {names[i]}", rel(c["final32"][i], w), F32_TOL, report)
    ok = all(report)
    print(f"{c['name']}: {'PASS' if ok else 'FAIL'}")
    return ok


def main():
    if len(sys.argv) != 2:
        print("usage: mha_parity.py RUN.json", file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        run = json.load(f)
    s = run["settings"]
    print(f"torch {torch.__version__}; gokeras float32 model on {s['Device']}; SGD lr {s['LearningRate']}")
    ok = all([run_case(c, s) for c in run["cases"]])
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
