#!/usr/bin/env python3
"""Times training steps of gokeras' CIFAR-10 MLP in PyTorch.

Flatten -> Linear(3072, 3000) -> ReLU -> Linear(3000, 1000) -> ReLU ->
Linear(1000, 10) -> sigmoid, trained as gokeras trains it: categorical
cross-entropy computed from the logits (softmax cross-entropy), SGD (or
--optimizer momentum: SGD with momentum 0.9; or any other optimizer train
--optimizer takes, with Keras' defaults: see OPTIMIZERS), float32, each
batch gathered from uint8 CIFAR-shaped images in host memory
and scaled to [0, 1] (on --device cuda the gathered uint8 batch is copied to
the GPU and scaled there, as gokeras copies its batch each step), the loss
and the accuracy read back every step as Keras does.

On cuda, TF32 is off for matrix products and cuDNN unless --tf32 is given,
and each step is timed between two torch.cuda.synchronize() calls.

Prints "torch VERSION, DEVICE" (and ", TF32 on|off" on cuda), then
"median X ms/step (p10 A, p90 B)".
"""
import argparse
import os
import time

import torch

# PyTorch's counterpart of each optimizer train --optimizer takes (and
# "momentum", train's --optimizer sgd --momentum 0.9), with Keras' default
# arguments: learning rate (0.01 for SGD, 0.001 for the others, or --lr),
# rho, betas, epsilon 1e-7, Adagrad's initial accumulator 0.1, AdamW's
# weight decay 0.004. The arithmetic is PyTorch's own (where its epsilon
# goes, Nadam's momentum schedule; bench/optim_parity.py lists the
# differences); the work per step, what this script times, is alike.
OPTIMIZERS = {
    "sgd": (0.01, lambda ps, lr: torch.optim.SGD(ps, lr=lr)),
    "momentum": (0.01, lambda ps, lr: torch.optim.SGD(ps, lr=lr, momentum=0.9)),
    "adam": (0.001, lambda ps, lr: torch.optim.Adam(ps, lr=lr, betas=(0.9, 0.999), eps=1e-7)),
    "adamw": (0.001, lambda ps, lr: torch.optim.AdamW(ps, lr=lr, betas=(0.9, 0.999), eps=1e-7, weight_decay=0.004)),
    "rmsprop": (0.001, lambda ps, lr: torch.optim.RMSprop(ps, lr=lr, alpha=0.9, eps=1e-7)),
    "adagrad": (0.001, lambda ps, lr: torch.optim.Adagrad(ps, lr=lr, initial_accumulator_value=0.1, eps=1e-7)),
    "adadelta": (0.001, lambda ps, lr: torch.optim.Adadelta(ps, lr=lr, rho=0.95, eps=1e-7)),
    "adamax": (0.001, lambda ps, lr: torch.optim.Adamax(ps, lr=lr, betas=(0.9, 0.999), eps=1e-7)),
    "nadam": (0.001, lambda ps, lr: torch.optim.NAdam(ps, lr=lr, betas=(0.9, 0.999), eps=1e-7)),
}


def device_name(dev):
    if dev.type == "cuda":
        return torch.cuda.get_device_name(dev)
    return f"CPU, {torch.get_num_threads()} threads"


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--lr", type=float, default=None, help="default: Keras' for the optimizer (0.01 sgd, 0.001 the others)")
    p.add_argument("--optimizer", choices=tuple(OPTIMIZERS), default="sgd")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--tf32", action="store_true", help="allow TF32 matrix products on cuda (off by default)")
    a = p.parse_args()
    if a.steps <= 0 or a.warmup < 0:
        p.error("--steps must be positive and --warmup not negative")

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    dev = torch.device(a.device)
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise SystemExit(f"torch {torch.__version__}: CUDA is not available "
                             f"(built for CUDA {torch.version.cuda}); run with --device cpu")
        torch.backends.cuda.matmul.allow_tf32 = a.tf32
        torch.backends.cudnn.allow_tf32 = a.tf32
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    tf32 = f", TF32 {'on' if a.tf32 else 'off'}" if dev.type == "cuda" else ""
    print(f"torch {torch.__version__}, {device_name(dev)}{tf32}", flush=True)

    n = (a.steps + a.warmup) * a.batch_size
    images = torch.randint(0, 256, (n, 32, 32, 3), dtype=torch.uint8)
    labels = torch.randint(0, 10, (n,))
    if dev.type == "cuda":
        images, labels = images.pin_memory(), labels.pin_memory()
    model = torch.nn.Sequential(
        torch.nn.Flatten(),
        torch.nn.Linear(32 * 32 * 3, 3000), torch.nn.ReLU(),
        torch.nn.Linear(3000, 1000), torch.nn.ReLU(),
        torch.nn.Linear(1000, 10),
    ).to(dev)
    default_lr, make = OPTIMIZERS[a.optimizer]
    opt = make(model.parameters(), a.lr or default_lr)
    loss_fn = torch.nn.CrossEntropyLoss()
    order = torch.randperm(n)
    times = []
    for step in range(a.steps + a.warmup):
        sync()
        t0 = time.perf_counter()
        idx = order[step * a.batch_size:(step + 1) * a.batch_size]
        x = images[idx].to(dev).to(torch.float32).div_(255)
        y = labels[idx].to(dev)
        logits = model(x)
        loss = loss_fn(logits, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        with torch.no_grad():  # what Keras' accuracy metric reads
            (torch.sigmoid(logits).argmax(1) == y).float().mean().item()
        loss.item()
        sync()
        times.append(time.perf_counter() - t0)
    t = sorted(times[a.warmup:])
    q = lambda f: t[min(len(t) - 1, int(f * len(t)))] * 1e3
    print(f"median {q(0.5):.2f} ms/step (p10 {q(0.1):.2f}, p90 {q(0.9):.2f})")


if __name__ == "__main__":
    main()
