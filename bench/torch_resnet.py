#!/usr/bin/env python3
"""The PyTorch twin of gokeras' applications.ResNetV1 (Keras' cifar10_resnet
ResNet v1), and the timing of its training steps (`train --model resnet20`).

build_model(depth) makes the network of Keras' example for depth 6n+2: a 3x3
convolution of 16 filters, BatchNormalization, ReLU; three stacks of n
residual blocks of 16, 32 and 64 filters, each block two 3x3 convolutions
with BatchNormalization (ReLU after the first), added to the block's input,
then a ReLU; the first block of the second and third stacks has strides 2
and a 1x1 convolution of strides 2 on its shortcut (no BatchNormalization);
AveragePooling2D(8), Flatten, Dense(classes) (ResNet-20: 274,442 parameters
with the moving statistics). As Keras computes it:
  - "same" padding is TensorFlow's: (out - 1)·stride + kernel - in zeros, half
    (rounded down) before, the rest after, so a 3x3 convolution of strides 2
    on 32x32 pads 0 on the top and left and 1 on the bottom and right (F.pad;
    where the padding is even the convolution pads itself);
  - BatchNormalization is BatchNorm2d(eps=1e-3, momentum=0.01): Keras'
    momentum 0.99; both update the moving variance with the unbiased batch
    variance on rank-4 inputs (Keras 2's fused batch normalization);
  - every convolution's kernel has an L2(1e-4) regularizer: penalty() is
    1e-4·Σw² over them, which the training loss adds;
  - Flatten flattens (H, W, C), Keras' channels-last order (for ResNet's 1x1
    image after the pooling, the same as PyTorch's);
  - the output is the logits; Keras' softmax and categorical cross-entropy
    are the cross-entropy of them.
The layers are made in the order Keras' example makes them, and named as
Keras names them in a fresh session (conv2d, conv2d_1, ...; Keras names a
layer when it is made, so a stride-2 block's shortcut convolution, made after
the block's two, is conv2d_9 and conv2d_16 in ResNet-20); graph() lists the
calls (name, Keras class, input names) for bench/parity_cnn.py, which matches
them with gokeras' graph by shape and connection, not by name.

As a program it times training steps as bench/torch_cnn.py does (same flags,
plus --channels-last).
"""
import os
import sys

import torch
import torch.nn.functional as F

nn = torch.nn


def tf_same(size, k, s):
    """TensorFlow's "same" padding (before, after) along one axis."""
    out = -(-size // s)
    pad = max((out - 1) * s + k - size, 0)
    return pad // 2, pad - pad // 2


class Conv2dSame(nn.Conv2d):
    """Conv2d with TensorFlow's "same" padding."""

    def forward(self, x):
        (t, b), (l, r) = (tf_same(x.shape[i], self.kernel_size[j], self.stride[j]) for i, j in ((-2, 0), (-1, 1)))
        if t == b and l == r:
            return F.conv2d(x, self.weight, self.bias, self.stride, (t, l))
        return F.conv2d(F.pad(x, (l, r, t, b)), self.weight, self.bias, self.stride)


class Add(nn.Module):
    def forward(self, *xs):
        out = xs[0]
        for x in xs[1:]:
            out = out + x
        return out


class FlattenHWC(nn.Module):
    """Keras' Flatten: (N, C, H, W) flattened in (H, W, C) order."""

    def forward(self, x):
        return x.permute(0, 2, 3, 1).flatten(1)


class ResNetV1(nn.Module):
    """Keras' cifar10_resnet resnet_v1 as a graph of named layer calls."""

    def __init__(self, depth=20, classes=10, channels=3, l2=1e-4):
        super().__init__()
        if depth < 8 or (depth - 2) % 6:
            raise ValueError(f"depth {depth}: want 6n+2")
        self.l2 = l2
        self.layer = nn.ModuleDict()
        self.calls = []  # (name, Keras class, [input names])
        self.counts = {}
        self.width = {"input_1": channels}
        x = self.resnet_layer("input_1", 16)
        filters = 16
        for stack in range(3):
            for block in range((depth - 2) // 6):
                strides = 2 if stack > 0 and block == 0 else 1
                y = self.resnet_layer(x, filters, strides=strides)
                y = self.resnet_layer(y, filters, activation=False)
                if strides == 2:
                    x = self.resnet_layer(x, filters, kernel=1, strides=strides, activation=False, bn=False)
                x = self.call("add", Add(), x, y)
                x = self.call("activation", nn.ReLU(), x)
            filters *= 2
        x = self.call("average_pooling2d", nn.AvgPool2d(8), x)
        x = self.call("flatten", FlattenHWC(), x)
        self.call("dense", nn.Linear(self.width[x], classes), x)

    KERAS_CLASS = {"conv2d": "Conv2D", "batch_normalization": "BatchNormalization", "activation": "Activation",
                   "add": "Add", "average_pooling2d": "AveragePooling2D", "flatten": "Flatten", "dense": "Dense"}

    def call(self, base, module, *inputs):
        n = self.counts.get(base, 0)
        self.counts[base] = n + 1
        name = base if n == 0 else f"{base}_{n}"
        self.layer[name] = module
        self.calls.append((name, self.KERAS_CLASS[base], list(inputs)))
        if isinstance(module, nn.Conv2d):
            self.width[name] = module.out_channels
        elif isinstance(module, nn.Linear):
            self.width[name] = module.out_features
        else:
            self.width[name] = self.width[inputs[0]]
        return name

    def resnet_layer(self, x, filters, kernel=3, strides=1, activation=True, bn=True):
        """The example's resnet_layer (conv_first)."""
        x = self.call("conv2d", Conv2dSame(self.width[x], filters, kernel, strides), x)
        if bn:
            x = self.call("batch_normalization", nn.BatchNorm2d(filters, eps=1e-3, momentum=0.01), x)
        if activation:
            x = self.call("activation", nn.ReLU(), x)
        return x

    def graph(self):
        return list(self.calls)

    def forward(self, x):
        v = {"input_1": x}
        for name, _, ins in self.calls:
            v[name] = self.layer[name](*(v[i] for i in ins))
        return v[self.calls[-1][0]]

    def penalty(self):
        """The kernel regularizers' loss: l2·Σw² over the convolutions' kernels."""
        return self.l2 * sum(m.weight.square().sum() for m in self.layer.values() if isinstance(m, nn.Conv2d))


def build_model(depth=20, classes=10):
    return ResNetV1(depth, classes)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import torch_cnn  # noqa: E402

    torch_cnn.main(build_model, __doc__)
