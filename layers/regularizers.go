package layers

import "fmt"

// Regularizer is a penalty on a layer's weights or output added to the
// model's loss, like keras.regularizers: L1·Σ|x| + L2·Σx². Give it to a
// Dense or convolution layer with KernelRegularizer, BiasRegularizer or
// ActivityRegularizer.
type Regularizer struct {
	L1, L2 float64
}

// L1 is keras.regularizers.L1(l1): l1·Σ|x| (Keras' default l1 is 0.01).
func L1(l1 float64) Regularizer { return Regularizer{L1: l1} }

// L2 is keras.regularizers.L2(l2): l2·Σx² (Keras' default l2 is 0.01).
func L2(l2 float64) Regularizer { return Regularizer{L2: l2} }

// L1L2 is keras.regularizers.L1L2(l1, l2): l1·Σ|x| + l2·Σx².
func L1L2(l1, l2 float64) Regularizer { return Regularizer{L1: l1, L2: l2} }

// String describes the regularizer as Keras' get_config would.
func (r Regularizer) String() string { return fmt.Sprintf("L1L2(l1=%g, l2=%g)", r.L1, r.L2) }
