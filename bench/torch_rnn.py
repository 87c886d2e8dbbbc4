#!/usr/bin/env python3
"""Times training steps of a recurrent layer in PyTorch, the twin of
go run ./bench/rnnspeed: nn.LSTM (or nn.GRU, nn.RNN with tanh) of --units
over --steps timesteps of --features features, batch --batch-size, the
last step's output into Linear(units, 1), mean squared error against
zeros, SGD at 0.01, float32 on the CPU.

Prints "torch VERSION, N threads" and "LAYER(units) ...: median X ms/step
(p10 A, p90 B)" over --batches steps after two warm-up steps. Compare it
with rnnspeed's median on a quiet machine only, with the threads set
alike (--threads; rnnspeed uses every core Go sees).
"""
import argparse
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layer", default="LSTM", choices=["LSTM", "GRU", "SimpleRNN"])
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--features", type=int, default=64)
    ap.add_argument("--units", type=int, default=128)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: PyTorch's default)")
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    cls = {"LSTM": torch.nn.LSTM, "GRU": torch.nn.GRU, "SimpleRNN": torch.nn.RNN}[a.layer]
    rnn = cls(a.features, a.units, batch_first=True)
    head = torch.nn.Linear(a.units, 1)
    opt = torch.optim.SGD(list(rnn.parameters()) + list(head.parameters()), lr=0.01)
    x = torch.randn(a.batch_size, a.steps, a.features)
    y = torch.zeros(a.batch_size, 1)
    times = []
    for i in range(a.batches + 2):
        start = time.perf_counter()
        opt.zero_grad()
        out, _ = rnn(x)
        loss = ((head(out[:, -1]) - y) ** 2).mean()
        loss.backward()
        opt.step()
        loss.item()
        if i >= 2:
            times.append(time.perf_counter() - start)
    times.sort()
    ms = lambda q: 1000 * times[min(len(times) - 1, int(q * len(times)))]
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"{a.layer}({a.units}) over {a.steps} timesteps of {a.features} features, batch {a.batch_size}: "
          f"median {ms(0.5):.1f} ms/step (p10 {ms(0.1):.1f}, p90 {ms(0.9):.1f})")


if __name__ == "__main__":
    main()
