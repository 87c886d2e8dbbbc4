package layers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
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
	{[]string{"zeros", "zero"}, "Zeros", Zeros},
	{[]string{"ones", "one"}, "Ones", Ones},
	{[]string{"random_normal", "normal"}, "RandomNormal", func() Initializer { return RandomNormal(0, 0.05) }},
	{[]string{"random_uniform", "uniform"}, "RandomUniform", func() Initializer { return RandomUniform(-0.05, 0.05) }},
}

// GetInitializer finds an initializer with Keras' defaults by its Keras
// name, as keras.initializers.get does: "glorot_uniform", "zeros", "ones",
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
