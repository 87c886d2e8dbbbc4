package layers

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/gokeras/gokeras/internal/formats/configargs"
)

// Initializer fills a new weight tensor of the given shape. fanIn and fanOut
// are those of a kernel of shape (fanIn, fanOut).
type Initializer interface {
	Name() string
	Fill(data []float32, fanIn, fanOut int, rng *rand.Rand)
}

// GlorotUniform is Keras' default kernel initializer: uniform in
// [-limit, limit] with limit = sqrt(6 / (fanIn + fanOut)).
func GlorotUniform() Initializer { return glorotUniform{} }

// Zeros fills with 0, Keras' default bias initializer.
func Zeros() Initializer { return constant(0) }

// HeNormal is Keras' he_normal: a normal distribution of mean 0 and
// standard deviation sqrt(2 / fanIn), truncated at two standard
// deviations (a value farther out is drawn again), with the standard
// deviation divided by 0.87962566103423978, the one of the unit normal
// truncated so, as Keras' VarianceScaling(2, "fan_in",
// "truncated_normal") does. The residual networks of Keras' examples
// (cifar10_resnet) start their convolutions from it.
func HeNormal() Initializer { return heNormal{} }

type heNormal struct{}

func (heNormal) Name() string { return "he_normal" }

func (heNormal) Fill(data []float32, fanIn, _ int, rng *rand.Rand) {
	stddev := math.Sqrt(2/float64(max(fanIn, 1))) / 0.87962566103423978
	for i := range data {
		z := rng.NormFloat64()
		for z < -2 || z > 2 {
			z = rng.NormFloat64()
		}
		data[i] = float32(z * stddev)
	}
}

// Ones fills with 1.
func Ones() Initializer { return constant(1) }

// RandomNormal draws from a normal distribution with the given mean and
// standard deviation (Keras' defaults are 0 and 0.05).
func RandomNormal(mean, stddev float64) Initializer { return randomNormal{mean, stddev} }

// RandomUniform draws uniformly from [minval, maxval) (Keras' defaults are
// -0.05 and 0.05, the Embedding layer's initializer).
func RandomUniform(minval, maxval float64) Initializer { return randomUniform{minval, maxval} }

type randomUniform struct{ min, max float64 }

func (randomUniform) Name() string { return "random_uniform" }

func (r randomUniform) Fill(data []float32, _, _ int, rng *rand.Rand) {
	for i := range data {
		data[i] = float32(r.min + (r.max-r.min)*rng.Float64())
	}
}

// initializers lists every initializer GetInitializer knows: Keras' name,
// its aliases, and its Keras class name.
var initializers = []struct {
	names []string
	class string
	make  func() Initializer
}{
	{[]string{"glorot_uniform"}, "GlorotUniform", GlorotUniform},
	{[]string{"he_normal"}, "HeNormal", HeNormal},
	{[]string{"orthogonal"}, "Orthogonal", func() Initializer { return Orthogonal(1) }},
	{[]string{"zeros", "zero"}, "Zeros", Zeros},
	{[]string{"ones", "one"}, "Ones", Ones},
	{[]string{"random_normal", "normal"}, "RandomNormal", func() Initializer { return RandomNormal(0, 0.05) }},
	{[]string{"random_uniform", "uniform"}, "RandomUniform", func() Initializer { return RandomUniform(-0.05, 0.05) }},
}

// GetInitializer finds an initializer with Keras' defaults by its Keras
// name, as keras.initializers.get does: "glorot_uniform", "he_normal", "orthogonal", "zeros", "ones",
// "random_normal" or "random_uniform", an alias ("zero", "one", "normal",
// "uniform") or the class name
// ("GlorotUniform"), in any case.
func GetInitializer(name string) (Initializer, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	var known []string
	for _, i := range initializers {
		if slices.Contains(i.names, key) || strings.ToLower(i.class) == key {
			return i.make(), nil
		}
		known = append(known, i.names...)
	}
	slices.Sort(known)
	return nil, fmt.Errorf("unknown initializer %q: known initializers are %s (or their Keras class names, such as GlorotUniform)", name, strings.Join(known, ", "))
}

type glorotUniform struct{}

func (glorotUniform) Name() string { return "glorot_uniform" }

func (glorotUniform) Fill(data []float32, fanIn, fanOut int, rng *rand.Rand) {
	limit := math.Sqrt(6 / float64(fanIn+fanOut))
	for i := range data {
		data[i] = float32((rng.Float64()*2 - 1) * limit)
	}
}

type constant float32

func (c constant) Name() string {
	switch c {
	case 0:
		return "zeros"
	case 1:
		return "ones"
	}
	return fmt.Sprintf("constant(%g)", float32(c))
}

func (c constant) Fill(data []float32, _, _ int, _ *rand.Rand) {
	for i := range data {
		data[i] = float32(c)
	}
}

type randomNormal struct{ mean, stddev float64 }

func (randomNormal) Name() string { return "random_normal" }

func (r randomNormal) Fill(data []float32, _, _ int, rng *rand.Rand) {
	for i := range data {
		data[i] = float32(r.mean + r.stddev*rng.NormFloat64())
	}
}

// InitializerConfig returns an initializer's configuration, as Keras
// serializes one: "GlorotUniform", "Zeros" and "Ones" with no arguments,
// "RandomNormal" with mean and stddev, "RandomUniform" with minval and
// maxval. An Initializer defined outside this package has none.
func InitializerConfig(i Initializer) (Config, error) {
	switch i := i.(type) {
	case glorotUniform:
		return Config{ClassName: "GlorotUniform", Config: map[string]any{}}, nil
	case heNormal:
		return Config{ClassName: "HeNormal", Config: map[string]any{}}, nil
	case constant:
		switch i {
		case 0:
			return Config{ClassName: "Zeros", Config: map[string]any{}}, nil
		case 1:
			return Config{ClassName: "Ones", Config: map[string]any{}}, nil
		}
		return Config{ClassName: "Constant", Config: map[string]any{"value": float64(i)}}, nil
	case randomNormal:
		return Config{ClassName: "RandomNormal", Config: map[string]any{"mean": i.mean, "stddev": i.stddev}}, nil
	case randomUniform:
		return Config{ClassName: "RandomUniform", Config: map[string]any{"minval": i.min, "maxval": i.max}}, nil
	case orthogonal:
		return Config{ClassName: "Orthogonal", Config: map[string]any{"gain": i.gain}}, nil
	}
	if configargs.IsNil(i) {
		return Config{}, errors.New("no initializer (nil)")
	}
	return Config{}, fmt.Errorf("initializer %q is a %T, which has no config: use one of package layers (GlorotUniform, Orthogonal, Zeros, Ones, RandomNormal, RandomUniform) to save the model's architecture",
		i.Name(), i)
}

// InitializerFromConfig makes an initializer from its configuration;
// arguments left out take Keras' defaults (RandomNormal(0, 0.05),
// RandomUniform(-0.05, 0.05)).
func InitializerFromConfig(c Config) (Initializer, error) {
	switch c.ClassName {
	case "GlorotUniform", "HeNormal", "Zeros", "Ones":
		if err := configargs.Decode(c.Config, &struct{}{}); err != nil {
			return nil, fmt.Errorf("%s: %w", c.ClassName, err)
		}
		switch c.ClassName {
		case "Zeros":
			return Zeros(), nil
		case "Ones":
			return Ones(), nil
		case "HeNormal":
			return HeNormal(), nil
		}
		return GlorotUniform(), nil
	case "Constant":
		var a struct {
			Value float32 `json:"value"`
		}
		if err := configargs.Decode(c.Config, &a); err != nil {
			return nil, fmt.Errorf("Constant: %w", err)
		}
		return constant(a.Value), nil
	case "RandomNormal":
		a := struct {
			Mean   float64 `json:"mean"`
			Stddev float64 `json:"stddev"`
		}{0, 0.05}
		if err := configargs.Decode(c.Config, &a); err != nil {
			return nil, fmt.Errorf("RandomNormal: %w", err)
		}
		return RandomNormal(a.Mean, a.Stddev), nil
	case "RandomUniform":
		a := struct {
			Minval float64 `json:"minval"`
			Maxval float64 `json:"maxval"`
		}{-0.05, 0.05}
		if err := configargs.Decode(c.Config, &a); err != nil {
			return nil, fmt.Errorf("RandomUniform: %w", err)
		}
		return RandomUniform(a.Minval, a.Maxval), nil
	case "Orthogonal":
		a := struct {
			Gain float64 `json:"gain"`
		}{1}
		if err := configargs.Decode(c.Config, &a); err != nil {
			return nil, fmt.Errorf("Orthogonal: %w", err)
		}
		return Orthogonal(a.Gain), nil
	}
	return nil, fmt.Errorf("unknown initializer class %q: the known initializer classes are Constant, GlorotUniform, HeNormal, Ones, Orthogonal, RandomNormal, RandomUniform, Zeros", c.ClassName)
}
