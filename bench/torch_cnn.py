#!/usr/bin/env python3
"""Times training steps of the Keras cifar10_cnn (gokeras' `train --model cnn`) in PyTorch.

Conv2d(3, 32, 3, same) -> ReLU -> Conv2d(32, 32, 3) -> ReLU -> MaxPool2d(2) ->
Dropout(0.25) -> Conv2d(32, 64, 3, same) -> ReLU -> Conv2d(64, 64, 3) -> ReLU ->
MaxPool2d(2) -> Dropout(0.25) -> Flatten -> Linear(2304, 512) -> ReLU ->
Dropout(0.5) -> Linear(512, 10) -> softmax (1,250,858 parameters), trained as
gokeras trains it: dropout active in training, categorical cross-entropy
computed from the logits (softmax cross-entropy, batch mean), SGD (or
--optimizer momentum: SGD with momentum 0.9; adam: Adam with Keras' defaults,
eps 1e-7), float32, each batch gathered from uint8 CIFAR-shaped (32, 32, 3)
images in host memory, put channels first as PyTorch's convolutions take them
and scaled to [0, 1] (on --device cuda the gathered uint8 batch is copied to
the GPU and converted there, as gokeras copies its batch each step), the loss
and the accuracy read back every step as Keras does.

"same" is padding 1 on every side, which is TensorFlow's "same" for a 3x3
kernel at stride 1. Flatten here flattens (C, H, W) where Keras flattens
(H, W, C): for timing that is only a fixed permutation of the first Linear's
input rows (bench/parity_cnn.py applies it when loading gokeras' weights).

On cuda, TF32 is off for matrix products and cuDNN unless --tf32 is given,
and each step is timed between two torch.cuda.synchronize() calls.

With --inference it times inference instead, as `train --benchmark
--benchmark-inference` does: the model in eval mode (dropout off) under
torch.no_grad(), one batch at a time, from the batch's uint8 images in host
memory to its softmax probabilities there.

Prints "torch VERSION, DEVICE" (and ", TF32 on|off" on cuda), then
"median X ms/step (p10 A, p90 B)", or "ms/batch" with --inference.
"""
import argparse
import os
import time

import torch


VARIANTS = ("plain", "batchnorm")


def build_model(dropout=1.0, variant="plain"):
    """The cifar10_cnn as a torch.nn.Sequential, its dropout rates scaled by
    dropout (0 makes them identities), without the final softmax (the loss
    takes the logits). variant "batchnorm" puts a BatchNorm2d with Keras'
    BatchNormalization defaults (epsilon 1e-3, momentum 0.99, which is
    PyTorch's momentum 0.01) between the first convolution and its ReLU, as
    bench/cnnparity's --variant batchnorm does."""
    nn = torch.nn
    if variant == "plain":
        first = [nn.Conv2d(3, 32, 3, padding=1), nn.ReLU()]
    elif variant == "batchnorm":
        first = [nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32, eps=1e-3, momentum=0.01), nn.ReLU()]
    else:
        raise ValueError(f"unknown variant {variant!r}: want one of {', '.join(VARIANTS)}")
    return nn.Sequential(
        *first,
        nn.Conv2d(32, 32, 3), nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Dropout(0.25 * dropout),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(),
        nn.Conv2d(64, 64, 3), nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Dropout(0.25 * dropout),
        nn.Flatten(),
        nn.Linear(6 * 6 * 64, 512), nn.ReLU(),
        nn.Dropout(0.5 * dropout),
        nn.Linear(512, 10),
    )


def device_name(dev):
    if dev.type == "cuda":
        return torch.cuda.get_device_name(dev)
    return f"CPU, {torch.get_num_threads()} threads"


def main(build=None, doc=__doc__):
    """Times the training steps of build() (default: the cifar10_cnn); a
    model with a penalty() method (torch_resnet.py's) adds it to the loss."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--lr", type=float, default=None, help="default: Keras' for the optimizer (0.01 sgd, 0.001 adam)")
    p.add_argument("--optimizer", choices=("sgd", "momentum", "adam"), default="sgd")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--tf32", action="store_true", help="allow TF32 matrix products and convolutions on cuda (off by default)")
    p.add_argument("--inference", action="store_true",
                   help="time no_grad forward passes in eval mode, to probabilities in host memory, instead of training steps")
    p.add_argument("--channels-last", action="store_true",
                   help="keep the model's weights and each batch in channels-last memory (torch.channels_last)")
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
    fmt = torch.channels_last if a.channels_last else torch.contiguous_format
    print(f"torch {torch.__version__}, {device_name(dev)}{tf32}{', channels-last' if a.channels_last else ''}", flush=True)

    n = (a.steps + a.warmup) * a.batch_size
    images = torch.randint(0, 256, (n, 32, 32, 3), dtype=torch.uint8)
    labels = torch.randint(0, 10, (n,))
    if dev.type == "cuda":
        images, labels = images.pin_memory(), labels.pin_memory()
    model = (build or build_model)().to(dev, memory_format=fmt)
    penalty = getattr(model, "penalty", None)
    model.train()  # dropout on, as in Keras' fit
    if a.optimizer == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=a.lr or 0.001, betas=(0.9, 0.999), eps=1e-7)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=a.lr or 0.01, momentum=0.9 if a.optimizer == "momentum" else 0)
    loss_fn = torch.nn.CrossEntropyLoss()
    order = torch.randperm(n)
    times = []
    if a.inference:
        model.eval()
        with torch.no_grad():
            for step in range(a.steps + a.warmup):
                sync()
                t0 = time.perf_counter()
                idx = order[step * a.batch_size:(step + 1) * a.batch_size]
                x = images[idx].to(dev).permute(0, 3, 1, 2).contiguous(memory_format=fmt).to(torch.float32).div_(255)
                torch.softmax(model(x), 1).cpu().numpy()
                sync()
                times.append(time.perf_counter() - t0)
        t = sorted(times[a.warmup:])
        q = lambda f: t[min(len(t) - 1, int(f * len(t)))] * 1e3
        print(f"median {q(0.5):.2f} ms/batch (p10 {q(0.1):.2f}, p90 {q(0.9):.2f})")
        return
    for step in range(a.steps + a.warmup):
        sync()
        t0 = time.perf_counter()
        idx = order[step * a.batch_size:(step + 1) * a.batch_size]
        x = images[idx].to(dev).permute(0, 3, 1, 2).contiguous(memory_format=fmt).to(torch.float32).div_(255)
        y = labels[idx].to(dev)
        logits = model(x)
        loss = loss_fn(logits, y)
        if penalty is not None:
            loss = loss + penalty()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        with torch.no_grad():  # what Keras' accuracy metric reads
            (torch.softmax(logits, 1).argmax(1) == y).float().mean().item()
        loss.item()
        sync()
        times.append(time.perf_counter() - t0)
    t = sorted(times[a.warmup:])
    q = lambda f: t[min(len(t) - 1, int(f * len(t)))] * 1e3
    print(f"median {q(0.5):.2f} ms/step (p10 {q(0.1):.2f}, p90 {q(0.9):.2f})")


if __name__ == "__main__":
    main()
