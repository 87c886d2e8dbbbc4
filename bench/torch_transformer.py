#!/usr/bin/env python3
"""Times training steps of a transformer encoder in PyTorch, the twin of
go run ./bench/transformerspeed: --layers nn.TransformerEncoderLayer
blocks (d_model --d-model, --heads heads, dim_feedforward
--dim-feedforward, ReLU, post-norm, dropout 0, batch_first) over --seq
steps at batch --batch-size, then the mean over the steps into
Linear(d_model, 1), mean squared error against zeros, SGD at 0.01,
float32 on the CPU.

Prints "torch VERSION, N threads" and "... median X ms/step (p10 A, p90 B)"
over --batches steps after two warm-up steps. Compare it with
transformerspeed's median on a quiet machine only.
"""
import argparse
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--d-model", type=int, default=128)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--dim-feedforward", type=int, default=512)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: PyTorch's default)")
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    block = torch.nn.TransformerEncoderLayer(a.d_model, a.heads, dim_feedforward=a.dim_feedforward, dropout=0.0,
                                             activation="relu", batch_first=True)
    enc = torch.nn.TransformerEncoder(block, a.layers, enable_nested_tensor=False)
    head = torch.nn.Linear(a.d_model, 1)
    opt = torch.optim.SGD(list(enc.parameters()) + list(head.parameters()), lr=0.01)
    x = torch.randn(a.batch_size, a.seq, a.d_model)
    y = torch.zeros(a.batch_size, 1)
    times = []
    for i in range(a.batches + 2):
        start = time.perf_counter()
        opt.zero_grad()
        out = enc(x)
        loss = ((head(out.mean(dim=1)) - y) ** 2).mean()
        loss.backward()
        opt.step()
        loss.item()
        if i >= 2:
            times.append(time.perf_counter() - start)
    times.sort()
    ms = lambda q: 1000 * times[min(len(times) - 1, int(q * len(times)))]
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"{a.layers} encoder blocks (d_model {a.d_model}, {a.heads} heads, feed-forward {a.dim_feedforward}) over {a.seq} steps, "
          f"batch {a.batch_size}: median {ms(0.5):.1f} ms/step (p10 {ms(0.1):.1f}, p90 {ms(0.9):.1f})")


if __name__ == "__main__":
    main()
