package applications

import (
	"fmt"

	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/nn"
)

// ResNetV1 makes the ResNet v1 of Keras' cifar10_resnet example (He et
// al., 2015) for depth = 6n+2 (20, 32, 44, 56, 110): a 3×3 convolution of
// 16 filters, then three stacks of n residual blocks of 16, 32 and 64
// filters, the first block of the second and third stacks halving the
// image with strides 2 and a 1×1 projection of its shortcut (without
// BatchNormalization); AveragePooling2D(8), Flatten and Dense(classes,
// softmax). Each residual block is two 3×3 convolutions, each followed by
// BatchNormalization (ReLU after the first), their sum with the block's
// input (Add), and a ReLU. Every convolution has "same" padding, he_normal
// initial kernels and an L2(1e-4) kernel regularizer, as the example's.
//
// For 32×32×3 images and 10 classes, ResNetV1(20, ...) has 274,442
// parameters, 1,376 of them BatchNormalization's moving statistics.
// Keras trains it with Adam (lr 1e-3) and a step schedule.
//
// The layers first, if any, are applied to the input before the network,
// in order: preprocessing and augmentation (Rescaling, RandomFlip,
// RandomTranslation), as Keras puts them in front of a model.
func ResNetV1(depth int, inputShape []int, classes int, first ...layers.Layer) (*nn.Model, error) {
	if depth < 8 || (depth-2)%6 != 0 {
		return nil, fmt.Errorf("ResNetV1: depth %d: want 6n+2 with n >= 1 (20, 32, 44, 56, 110)", depth)
	}
	if classes < 1 {
		return nil, fmt.Errorf("ResNetV1: %d classes: want at least 1", classes)
	}
	blocks := (depth - 2) / 6
	in := nn.Input(inputShape...)
	x := in
	for _, l := range first {
		x = nn.Apply(l, x)
	}
	x = resnetLayer(x, 16, 3, 1, true, true)
	filters := 16
	for stack := range 3 {
		for block := range blocks {
			strides := 1
			if stack > 0 && block == 0 {
				strides = 2 // the first block of a stack halves the image
			}
			y := resnetLayer(x, filters, 3, strides, true, true)
			y = resnetLayer(y, filters, 3, 1, false, true)
			if strides == 2 {
				// The shortcut projects the block's input to the new shape.
				x = resnetLayer(x, filters, 1, strides, false, false)
			}
			x = nn.Apply(layers.Add(), x, y)
			x = nn.Apply(layers.NewActivation(layers.ReLU), x)
		}
		filters *= 2
	}
	x = nn.Apply(layers.AveragePooling2D(layers.PoolSize(8)), x)
	x = nn.Apply(layers.Flatten(), x)
	out := nn.Apply(layers.Dense(classes, layers.Softmax, layers.KernelInitializer(layers.HeNormal())), x)
	m, err := nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{out})
	if err != nil {
		return nil, fmt.Errorf("ResNetV1: %w", err)
	}
	return m, nil
}

// resnetLayer is the example's resnet_layer with conv_first: a
// convolution, then BatchNormalization when bn, then a ReLU when relu.
func resnetLayer(x *nn.Tensor, filters, kernel, strides int, relu, bn bool) *nn.Tensor {
	x = nn.Apply(layers.Conv2D(filters, kernel, layers.Strides(strides), layers.Padding("same"),
		layers.KernelInitializer(layers.HeNormal()), layers.KernelRegularizer(layers.L2(1e-4))), x)
	if bn {
		x = nn.Apply(layers.BatchNormalization(), x)
	}
	if relu {
		x = nn.Apply(layers.NewActivation(layers.ReLU), x)
	}
	return x
}
