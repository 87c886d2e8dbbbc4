#!/usr/bin/env python3
"""PyTorch's stride-1 3x3 convolutions of ResNet-20's three stages, alone.

Times torch.nn.Conv2d (channels-last, no bias, "same" padding) forward and
forward+backward (input and kernel gradients) at batch 32 and 128 on 1 and
2 threads, best of 5 runs of 10, and prints the GFLOP/s of each counted as
gokeras' BenchmarkConv counts them: 2·batch·OH·OW·9·C·F a pass, the zero
padding's multiplications included (oneDNN's direct convolution skips
them: on 8x8 images 16% of them). Compare with

    go test -run XXX -bench 'Conv$' ./internal/kernels/conv

Run it with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset.
"""
import time

import torch


def main():
    print("torch", torch.__version__, "oneDNN", torch.backends.mkldnn.is_available())
    for threads in (1, 2):
        torch.set_num_threads(threads)
        for h, c in ((32, 16), (16, 32), (8, 64)):
            for b in (32, 128):
                x = torch.randn(b, c, h, h).to(memory_format=torch.channels_last).requires_grad_()
                conv = torch.nn.Conv2d(c, c, 3, padding=1, bias=False).to(memory_format=torch.channels_last)
                flops = 2 * b * h * h * c * c * 9
                for name, passes in (("forward", 1), ("forward+backward", 3)):
                    best = float("inf")
                    for _ in range(5):
                        start = time.perf_counter()
                        for _ in range(10):
                            y = conv(x)
                            if passes == 3:
                                y.backward(torch.ones_like(y))
                        best = min(best, (time.perf_counter() - start) / 10)
                    print(f"threads {threads} {h}x{h}x{c} batch {b} {name}: {best * 1e3:.3f} ms, "
                          f"{passes * flops / best / 1e9:.1f} GFLOP/s")


if __name__ == "__main__":
    main()
