package layers

import (
	"errors"
	"fmt"

	"github.com/gokeras/gokeras/internal/formats/configargs"
)

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

// RegularizerConfig returns a regularizer's configuration, as Keras
// serializes one: "L1" with l1 when it has no L2 part, "L2" with l2 when
// it has no L1 part, "L1L2" with both otherwise.
func RegularizerConfig(r Regularizer) Config {
	switch {
	case r.L2 == 0 && r.L1 != 0:
		return Config{ClassName: "L1", Config: map[string]any{"l1": r.L1}}
	case r.L1 == 0 && r.L2 != 0:
		return Config{ClassName: "L2", Config: map[string]any{"l2": r.L2}}
	}
	return Config{ClassName: "L1L2", Config: map[string]any{"l1": r.L1, "l2": r.L2}}
}

// RegularizerFromConfig makes a regularizer from its configuration;
// arguments left out take Keras' defaults (0.01 for L1 and L2, 0 for
// L1L2).
func RegularizerFromConfig(c Config) (Regularizer, error) {
	a := struct {
		L1 *float64 `json:"l1"`
		L2 *float64 `json:"l2"`
	}{}
	var r Regularizer
	switch c.ClassName {
	case "L1", "L2", "L1L2":
	default:
		return r, fmt.Errorf("unknown regularizer class %q: the known regularizer classes are L1, L2, L1L2", c.ClassName)
	}
	if err := configargs.Decode(c.Config, &a); err != nil {
		return r, fmt.Errorf("%s: %w", c.ClassName, err)
	}
	switch {
	case c.ClassName == "L1" && a.L2 != nil:
		return r, errors.New(`L1: unknown argument "l2"`)
	case c.ClassName == "L2" && a.L1 != nil:
		return r, errors.New(`L2: unknown argument "l1"`)
	}
	def := 0.0
	if c.ClassName != "L1L2" {
		def = 0.01
	}
	if a.L1 != nil {
		r.L1 = *a.L1
	} else if c.ClassName == "L1" {
		r.L1 = def
	}
	if a.L2 != nil {
		r.L2 = *a.L2
	} else if c.ClassName == "L2" {
		r.L2 = def
	}
	return r, nil
}
