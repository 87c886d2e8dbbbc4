#!/usr/bin/env python3
"""Times training steps of the gokeras flagship model in PyTorch.

Flatten -> Linear(3072, 3000) -> ReLU -> Linear(3000, 1000) -> ReLU ->
Linear(1000, 10) -> sigmoid, trained as gokeras trains it: categorical
cross-entropy computed from the logits (softmax cross-entropy), plain SGD,
float32, each batch gathered from uint8 CIFAR-shaped images and scaled to
[0, 1]. Prints one line: "median X ms/step (p10 A, p90 B)".
"""
import argparse
import os
import time

import torch


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    n = (a.steps + a.warmup) * a.batch_size
    images = torch.randint(0, 256, (n, 32, 32, 3), dtype=torch.uint8)
    labels = torch.randint(0, 10, (n,))
    model = torch.nn.Sequential(
        torch.nn.Flatten(),
        torch.nn.Linear(32 * 32 * 3, 3000), torch.nn.ReLU(),
        torch.nn.Linear(3000, 1000), torch.nn.ReLU(),
        torch.nn.Linear(1000, 10),
    )
    opt = torch.optim.SGD(model.parameters(), lr=a.lr)
    loss_fn = torch.nn.CrossEntropyLoss()
    order = torch.randperm(n)
    times = []
    for step in range(a.steps + a.warmup):
        t0 = time.perf_counter()
        idx = order[step * a.batch_size:(step + 1) * a.batch_size]
        x = images[idx].to(torch.float32).div_(255)
        y = labels[idx]
        logits = model(x)
        loss = loss_fn(logits, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        with torch.no_grad():  # what Keras' accuracy metric reads
            (torch.sigmoid(logits).argmax(1) == y).float().mean().item()
        loss.item()
        times.append(time.perf_counter() - t0)
    t = sorted(times[a.warmup:])
    q = lambda f: t[min(len(t) - 1, int(f * len(t)))] * 1e3
    print(f"median {q(0.5):.2f} ms/step (p10 {q(0.1):.2f}, p90 {q(0.9):.2f})")


if __name__ == "__main__":
    main()
