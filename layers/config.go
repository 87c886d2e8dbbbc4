package layers

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gokeras/gokeras/internal/configargs"
	"github.com/gokeras/gokeras/ops"
)

// Config is a layer's configuration as Keras serializes one: its Keras
// class name and its arguments by their Keras names, values JSON can
// hold. Initializers and regularizers, arguments of some layers, are
// Configs of their own inside it, as in Keras:
//
//	{"class_name": "Dense", "config": {"name": "dense", "units": 64,
//	 "activation": "relu", "use_bias": true,
//	 "kernel_initializer": {"class_name": "GlorotUniform", "config": {}}, ...}}
//
// ConfigOf (or a layer's Config method) gives it, FromConfig makes the
// layer again; packages losses, metrics and optim have the same Config,
// ConfigOf and FromConfig for theirs, and nn's Save writes them all.
//
// Config holds Go values: ints (a Dropout seed is a uint64), float64s,
// bools, strings, []int, nil for Keras' None, and Configs. FromConfig also takes what encoding/json
// decodes from the JSON of a Config (float64s or json.Numbers, []any,
// map[string]any): it reads the arguments through their JSON form.
type Config struct {
	ClassName string         `json:"class_name"`
	Config    map[string]any `json:"config"`
}

// Configurable is implemented by layers that have a Config: every layer of
// this package.
type Configurable interface {
	// Config returns the layer's Keras class name and arguments. It fails
	// only for arguments that have no config, such as an Initializer
	// defined outside this package.
	Config() (Config, error)
}

// ConfigOf returns the configuration of l, which FromConfig makes a layer
// like l from: the same class, name and arguments, so that built from the
// same random stream it has the same weights. A layer defined outside this
// package has none, and is an error.
//
// A built Dropout layer without a Seed reports as its seed the key it drew
// from the model's seed, so that the layer FromConfig makes drops the same
// units at each training step.
func ConfigOf(l Layer) (Config, error) {
	if configargs.IsNil(l) {
		return Config{}, errors.New("no layer (nil)")
	}
	c, ok := l.(Configurable)
	if !ok {
		return Config{}, fmt.Errorf("layer %q is a %T, which has no config: only the layers of package layers (%s) can be saved with the model's architecture; save the weights alone with SaveWeights, and make the model in code to load them",
			l.Name(), l, strings.Join(classNames(), ", "))
	}
	return c.Config()
}

// FromConfig makes a layer from its configuration, as Keras'
// layers.deserialize does (decode a Config's JSON with json.Decoder's
// UseNumber to keep every digit of a Dropout seed above 2^53). Arguments left out take Keras' defaults, a
// name left out leaves the layer for its model to name. An unknown class,
// an unknown argument, a missing required one (units, filters, rate, ...)
// or a value of the wrong type or out of range is an error that names it;
// the unknown class's error lists the known ones.
func FromConfig(c Config) (Layer, error) {
	build, ok := layerClasses[c.ClassName]
	if !ok {
		return nil, fmt.Errorf("unknown layer class %q: the known layer classes are %s", c.ClassName, strings.Join(classNames(), ", "))
	}
	l, err := build(c.Config)
	if err != nil {
		return nil, fmt.Errorf("%s layer config: %w", c.ClassName, err)
	}
	if ch, ok := l.(ConfigChecker); ok {
		if err := ch.CheckConfig(); err != nil {
			return nil, err
		}
	} else if n, ok := l.(interface{ nameError() error }); ok && n.nameError() != nil {
		return nil, fmt.Errorf("%s layer: %w", c.ClassName, n.nameError())
	}
	return l, nil
}

// layerClasses makes each layer class from its arguments.
var layerClasses = map[string]func(args map[string]any) (Layer, error){
	"Dense":                  denseFromConfig,
	"Conv1D":                 convFromConfig(1),
	"Conv2D":                 convFromConfig(2),
	"MaxPooling1D":           poolFromConfig(ops.MaxPool, 1, false),
	"MaxPooling2D":           poolFromConfig(ops.MaxPool, 2, false),
	"AveragePooling1D":       poolFromConfig(ops.AvgPool, 1, false),
	"AveragePooling2D":       poolFromConfig(ops.AvgPool, 2, false),
	"GlobalMaxPooling1D":     poolFromConfig(ops.MaxPool, 1, true),
	"GlobalMaxPooling2D":     poolFromConfig(ops.MaxPool, 2, true),
	"GlobalAveragePooling1D": poolFromConfig(ops.AvgPool, 1, true),
	"GlobalAveragePooling2D": poolFromConfig(ops.AvgPool, 2, true),
	"Dropout":                dropoutFromConfig,
	"BatchNormalization":     normFromConfig(true),
	"LayerNormalization":     normFromConfig(false),
	"Embedding":              embeddingFromConfig,
	"Reshape":                reshapeFromConfig,
	"Flatten":                flattenFromConfig,
	"Activation":             activationFromConfig,
	"InputLayer":             inputFromConfig,
}

// classNames lists the layer classes FromConfig knows, sorted.
func classNames() []string { return slices.Sorted(maps.Keys(layerClasses)) }

// missing is the error for a required argument left out.
func missing(name string) error { return fmt.Errorf("argument %q is missing: it has no default", name) }

// baseArgs are the arguments of every layer.
type baseArgs struct {
	Name string `json:"name"`
}

// nameOptions returns Named(name) for a name given, none for none.
func (a baseArgs) nameOptions() []Option {
	if a.Name == "" {
		return nil
	}
	return []Option{Named(a.Name)}
}

// axes lists a window's per-axis values as Keras does: one per axis, so
// one for a 1D layer.
func (w *window) axes(v [2]int) []int {
	if w.rank == 1 {
		return []int{v[1]}
	}
	return []int{v[0], v[1]}
}

// paddingName is the Keras padding argument.
func (w *window) paddingName() string {
	if w.same {
		return "same"
	}
	return "valid"
}

// atLeastOne replaces a window's zero (default) values with 1.
func atLeastOne(v [2]int) [2]int { return [2]int{max(v[0], 1), max(v[1], 1)} }

// windowArgs are the arguments of layers that slide a window.
type windowArgs struct {
	Strides      []int  `json:"strides"`
	Padding      string `json:"padding"`
	DilationRate []int  `json:"dilation_rate"`
}

func (a windowArgs) options() []WindowOption {
	var opts []WindowOption
	if a.Strides != nil {
		opts = append(opts, Strides(a.Strides...))
	}
	if a.DilationRate != nil {
		opts = append(opts, DilationRate(a.DilationRate...))
	}
	return append(opts, Padding(a.Padding))
}

// config adds the weight arguments of a Dense or convolution layer.
func (w weights) config(args map[string]any) error {
	k, err := InitializerConfig(w.kernelInit)
	if err != nil {
		return fmt.Errorf("kernel_initializer: %w", err)
	}
	b, err := InitializerConfig(w.biasInit)
	if err != nil {
		return fmt.Errorf("bias_initializer: %w", err)
	}
	args["use_bias"] = w.useBias
	args["kernel_initializer"], args["bias_initializer"] = k, b
	args["kernel_regularizer"] = regularizerOrNone(w.kernelReg)
	args["bias_regularizer"] = regularizerOrNone(w.biasReg)
	args["activity_regularizer"] = regularizerOrNone(w.activityReg)
	return nil
}

// regularizerOrNone is a regularizer's config, or nil (Keras' None).
func regularizerOrNone(r *Regularizer) any {
	if r == nil {
		return nil
	}
	return RegularizerConfig(*r)
}

// weightArgs are the weight arguments of a Dense or convolution layer.
type weightArgs struct {
	UseBias             bool    `json:"use_bias"`
	KernelInitializer   *Config `json:"kernel_initializer"`
	BiasInitializer     *Config `json:"bias_initializer"`
	KernelRegularizer   *Config `json:"kernel_regularizer"`
	BiasRegularizer     *Config `json:"bias_regularizer"`
	ActivityRegularizer *Config `json:"activity_regularizer"`
}

func (a weightArgs) options() ([]WeightOption, error) {
	var opts []WeightOption
	if !a.UseBias {
		opts = append(opts, WithoutBias())
	}
	for _, i := range []struct {
		name string
		c    *Config
		opt  func(Initializer) WeightOption
	}{{"kernel_initializer", a.KernelInitializer, KernelInitializer}, {"bias_initializer", a.BiasInitializer, BiasInitializer}} {
		if i.c == nil {
			continue
		}
		init, err := InitializerFromConfig(*i.c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", i.name, err)
		}
		opts = append(opts, i.opt(init))
	}
	for _, r := range []struct {
		name string
		c    *Config
		opt  func(Regularizer) WeightOption
	}{
		{"kernel_regularizer", a.KernelRegularizer, KernelRegularizer},
		{"bias_regularizer", a.BiasRegularizer, BiasRegularizer},
		{"activity_regularizer", a.ActivityRegularizer, ActivityRegularizer},
	} {
		if r.c == nil {
			continue
		}
		reg, err := RegularizerFromConfig(*r.c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.name, err)
		}
		opts = append(opts, r.opt(reg))
	}
	return opts, nil
}

// Config returns "Dense" with name, units, activation, use_bias, the
// initializers and the regularizers.
func (d *DenseLayer) Config() (Config, error) {
	args := map[string]any{"name": d.name, "units": d.units, "activation": d.activation.String()}
	if err := d.weights.config(args); err != nil {
		return Config{}, fmt.Errorf("dense layer %q: %w", d.name, err)
	}
	return Config{ClassName: d.Type(), Config: args}, nil
}

func denseFromConfig(args map[string]any) (Layer, error) {
	a := struct {
		baseArgs
		Units      *int   `json:"units"`
		Activation string `json:"activation"`
		weightArgs
	}{weightArgs: weightArgs{UseBias: true}}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	if a.Units == nil {
		return nil, missing("units")
	}
	act, err := GetActivation(a.Activation)
	if err != nil {
		return nil, err
	}
	wopts, err := a.options()
	if err != nil {
		return nil, err
	}
	opts := []DenseOption{act}
	for _, o := range wopts {
		opts = append(opts, o)
	}
	for _, o := range a.nameOptions() {
		opts = append(opts, o)
	}
	return Dense(*a.Units, opts...), nil
}

// Config returns "Conv2D" or "Conv1D" with name, filters, kernel_size,
// strides, padding, dilation_rate, activation, use_bias, the initializers
// and the regularizers; the per-axis values hold one value per axis.
func (c *ConvLayer) Config() (Config, error) {
	args := map[string]any{
		"name": c.name, "filters": c.filters, "kernel_size": c.axes(c.size),
		"strides": c.axes(atLeastOne(c.strides)), "padding": c.paddingName(),
		"dilation_rate": c.axes(atLeastOne(c.dilation)), "activation": c.activation.String(),
	}
	if err := c.weights.config(args); err != nil {
		return Config{}, fmt.Errorf("%s layer %q: %w", c.Type(), c.name, err)
	}
	return Config{ClassName: c.Type(), Config: args}, nil
}

func convFromConfig(rank int) func(map[string]any) (Layer, error) {
	return func(args map[string]any) (Layer, error) {
		a := struct {
			baseArgs
			Filters    *int   `json:"filters"`
			KernelSize []int  `json:"kernel_size"`
			Activation string `json:"activation"`
			windowArgs
			weightArgs
		}{windowArgs: windowArgs{Padding: "valid"}, weightArgs: weightArgs{UseBias: true}}
		if err := configargs.Decode(args, &a); err != nil {
			return nil, err
		}
		if a.Filters == nil {
			return nil, missing("filters")
		}
		if a.KernelSize == nil {
			return nil, missing("kernel_size")
		}
		act, err := GetActivation(a.Activation)
		if err != nil {
			return nil, err
		}
		opts := []ConvOption{act}
		ks := a.KernelSize
		switch {
		case len(ks) == 1:
		case len(ks) == 2 && rank == 2:
			opts = append(opts, KernelSize(ks[0], ks[1]))
		default:
			return nil, fmt.Errorf("kernel_size %v: give 1 value, or one per axis (%d)", ks, rank)
		}
		for _, o := range a.windowArgs.options() {
			opts = append(opts, o)
		}
		wopts, err := a.weightArgs.options()
		if err != nil {
			return nil, err
		}
		for _, o := range wopts {
			opts = append(opts, o)
		}
		for _, o := range a.nameOptions() {
			opts = append(opts, o)
		}
		return newConv(rank, *a.Filters, ks[0], opts), nil
	}
}

// Config returns the pooling's class with name, and for the poolings that
// are not global pool_size, strides (the pool size when not given) and
// padding.
func (p *PoolLayer) Config() (Config, error) {
	args := map[string]any{"name": p.name}
	if !p.global {
		strides := p.strides
		if strides == [2]int{} {
			strides = p.size
		}
		args["pool_size"], args["strides"], args["padding"] = p.axes(p.size), p.axes(strides), p.paddingName()
	}
	return Config{ClassName: p.Type(), Config: args}, nil
}

func poolFromConfig(kind ops.PoolKind, rank int, global bool) func(map[string]any) (Layer, error) {
	return func(args map[string]any) (Layer, error) {
		if global {
			var a baseArgs
			if err := configargs.Decode(args, &a); err != nil {
				return nil, err
			}
			return newPool(kind, rank, true, optionsAsPool(a.nameOptions())), nil
		}
		a := struct {
			baseArgs
			PoolSize []int  `json:"pool_size"`
			Strides  []int  `json:"strides"`
			Padding  string `json:"padding"`
		}{Padding: "valid"}
		if err := configargs.Decode(args, &a); err != nil {
			return nil, err
		}
		var opts []PoolOption
		if a.PoolSize != nil {
			opts = append(opts, PoolSize(a.PoolSize...))
		}
		for _, o := range (windowArgs{Strides: a.Strides, Padding: a.Padding}).options() {
			opts = append(opts, o)
		}
		opts = append(opts, optionsAsPool(a.nameOptions())...)
		return newPool(kind, rank, false, opts), nil
	}
}

// Config returns "Dropout" with name, rate and seed: the Seed given, or
// once the layer is built the key it drew from the model's seed, or nil
// (Keras' None) before.
func (d *DropoutLayer) Config() (Config, error) {
	var seed any
	switch {
	case d.seeded:
		seed = d.seed
	case d.key != 0:
		seed = d.key
	}
	return Config{ClassName: d.Type(), Config: map[string]any{"name": d.name, "rate": d.rate, "seed": seed}}, nil
}

func dropoutFromConfig(args map[string]any) (Layer, error) {
	var a struct {
		baseArgs
		Rate *float64 `json:"rate"`
		Seed *uint64  `json:"seed"`
	}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	if a.Rate == nil {
		return nil, missing("rate")
	}
	var opts []DropoutOption
	if a.Seed != nil {
		opts = append(opts, Seed(*a.Seed))
	}
	for _, o := range a.nameOptions() {
		opts = append(opts, o)
	}
	return Dropout(*a.Rate, opts...), nil
}

// Config returns "BatchNormalization" with name, axis (-1), momentum,
// epsilon, center and scale.
func (b *BatchNormalizationLayer) Config() (Config, error) {
	args := b.normConfig()
	args["momentum"] = b.momentum
	return Config{ClassName: b.Type(), Config: args}, nil
}

// Config returns "LayerNormalization" with name, axis (-1), epsilon,
// center and scale.
func (l *LayerNormalizationLayer) Config() (Config, error) {
	return Config{ClassName: l.Type(), Config: l.normConfig()}, nil
}

func (n *normLayer) normConfig() map[string]any {
	return map[string]any{"name": n.name, "axis": -1, "epsilon": n.epsilon, "center": n.center, "scale": n.scale}
}

func normFromConfig(batch bool) func(map[string]any) (Layer, error) {
	return func(args map[string]any) (Layer, error) {
		var a struct {
			baseArgs
			Axis     int      `json:"axis"`
			Momentum *float64 `json:"momentum"`
			Epsilon  *float64 `json:"epsilon"`
			Center   *bool    `json:"center"`
			Scale    *bool    `json:"scale"`
		}
		a.Axis = -1
		if err := configargs.Decode(args, &a); err != nil {
			return nil, err
		}
		if !batch && a.Momentum != nil {
			return nil, errors.New(`unknown argument "momentum"`)
		}
		if a.Axis != -1 {
			return nil, fmt.Errorf("axis %d: gokeras normalizes the last axis only, axis -1", a.Axis)
		}
		var opts []NormOption
		if a.Momentum != nil {
			opts = append(opts, Momentum(*a.Momentum))
		}
		if a.Epsilon != nil {
			opts = append(opts, Epsilon(*a.Epsilon))
		}
		if a.Center != nil && !*a.Center {
			opts = append(opts, WithoutCenter())
		}
		if a.Scale != nil && !*a.Scale {
			opts = append(opts, WithoutScale())
		}
		for _, o := range a.nameOptions() {
			opts = append(opts, o)
		}
		if batch {
			return BatchNormalization(opts...), nil
		}
		return LayerNormalization(opts...), nil
	}
}

// Config returns "Embedding" with name, input_dim, output_dim and
// embeddings_initializer.
func (e *EmbeddingLayer) Config() (Config, error) {
	init, err := InitializerConfig(e.init)
	if err != nil {
		return Config{}, fmt.Errorf("embedding layer %q: embeddings_initializer: %w", e.name, err)
	}
	return Config{ClassName: e.Type(), Config: map[string]any{
		"name": e.name, "input_dim": e.inputDim, "output_dim": e.outputDim, "embeddings_initializer": init,
	}}, nil
}

func embeddingFromConfig(args map[string]any) (Layer, error) {
	var a struct {
		baseArgs
		InputDim              *int    `json:"input_dim"`
		OutputDim             *int    `json:"output_dim"`
		EmbeddingsInitializer *Config `json:"embeddings_initializer"`
	}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	if a.InputDim == nil {
		return nil, missing("input_dim")
	}
	if a.OutputDim == nil {
		return nil, missing("output_dim")
	}
	var opts []EmbeddingOption
	if a.EmbeddingsInitializer != nil {
		init, err := InitializerFromConfig(*a.EmbeddingsInitializer)
		if err != nil {
			return nil, fmt.Errorf("embeddings_initializer: %w", err)
		}
		opts = append(opts, EmbeddingsInitializer(init))
	}
	for _, o := range a.nameOptions() {
		opts = append(opts, o)
	}
	return Embedding(*a.InputDim, *a.OutputDim, opts...), nil
}

// Config returns "Reshape" with name and target_shape.
func (r *ReshapeLayer) Config() (Config, error) {
	return Config{ClassName: r.Type(), Config: map[string]any{"name": r.name, "target_shape": slices.Clone(r.target)}}, nil
}

func reshapeFromConfig(args map[string]any) (Layer, error) {
	var a struct {
		baseArgs
		TargetShape []int `json:"target_shape"`
	}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	if a.TargetShape == nil {
		return nil, missing("target_shape")
	}
	return Reshape(a.TargetShape, a.nameOptions()...), nil
}

// Config returns "Flatten" with name.
func (f *FlattenLayer) Config() (Config, error) {
	return Config{ClassName: f.Type(), Config: map[string]any{"name": f.name}}, nil
}

func flattenFromConfig(args map[string]any) (Layer, error) {
	var a baseArgs
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	return Flatten(a.nameOptions()...), nil
}

// Config returns "Activation" with name and activation.
func (a *ActivationLayer) Config() (Config, error) {
	return Config{ClassName: a.Type(), Config: map[string]any{"name": a.name, "activation": a.activation.String()}}, nil
}

func activationFromConfig(args map[string]any) (Layer, error) {
	var a struct {
		baseArgs
		Activation *string `json:"activation"`
	}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	if a.Activation == nil {
		return nil, missing("activation")
	}
	act, err := GetActivation(*a.Activation)
	if err != nil {
		return nil, err
	}
	return NewActivation(act, a.nameOptions()...), nil
}

// Config returns "InputLayer" with name and batch_shape, the shape with
// the batch axis first as nil (Keras' None).
func (i *InputLayer) Config() (Config, error) {
	shape := []any{nil}
	for _, d := range i.shape {
		shape = append(shape, d)
	}
	return Config{ClassName: i.Type(), Config: map[string]any{"name": i.name, "batch_shape": shape}}, nil
}

func inputFromConfig(args map[string]any) (Layer, error) {
	var a struct {
		baseArgs
		BatchShape []*int `json:"batch_shape"`
	}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	if len(a.BatchShape) == 0 {
		return nil, missing("batch_shape")
	}
	if a.BatchShape[0] != nil {
		return nil, fmt.Errorf("batch_shape: the batch axis must be null (None), got %d: gokeras takes batches of any size", *a.BatchShape[0])
	}
	var shape []int
	for i, d := range a.BatchShape[1:] {
		if d == nil {
			return nil, fmt.Errorf("batch_shape: axis %d is null: only the batch axis may be", i+1)
		}
		shape = append(shape, *d)
	}
	return Input(shape...).With(a.nameOptions()...), nil
}

// InitializerConfig returns an initializer's configuration, as Keras
// serializes one: "GlorotUniform", "Zeros" and "Ones" with no arguments,
// "RandomNormal" with mean and stddev, "RandomUniform" with minval and
// maxval. An Initializer defined outside this package has none.
func InitializerConfig(i Initializer) (Config, error) {
	switch i := i.(type) {
	case glorotUniform:
		return Config{ClassName: "GlorotUniform", Config: map[string]any{}}, nil
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
	}
	if configargs.IsNil(i) {
		return Config{}, errors.New("no initializer (nil)")
	}
	return Config{}, fmt.Errorf("initializer %q is a %T, which has no config: use one of package layers (GlorotUniform, Zeros, Ones, RandomNormal, RandomUniform) to save the model's architecture",
		i.Name(), i)
}

// InitializerFromConfig makes an initializer from its configuration;
// arguments left out take Keras' defaults (RandomNormal(0, 0.05),
// RandomUniform(-0.05, 0.05)).
func InitializerFromConfig(c Config) (Initializer, error) {
	switch c.ClassName {
	case "GlorotUniform", "Zeros", "Ones":
		if err := configargs.Decode(c.Config, &struct{}{}); err != nil {
			return nil, fmt.Errorf("%s: %w", c.ClassName, err)
		}
		switch c.ClassName {
		case "Zeros":
			return Zeros(), nil
		case "Ones":
			return Ones(), nil
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
	}
	return nil, fmt.Errorf("unknown initializer class %q: the known initializer classes are Constant, GlorotUniform, Ones, RandomNormal, RandomUniform, Zeros", c.ClassName)
}

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
