package layers

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gokeras/gokeras/internal/formats/configargs"
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
// A built Dropout or random augmentation layer (RandomFlip, RandomZoom,
// ...) without a Seed reports as its seed the key it drew from the
// model's seed, so that the layer FromConfig makes draws the same at each
// training step; before it is built, its seed is nil (Keras' None).
// Keras' get_config reports None either way. So a layer's config changes
// when it is built: compare configs of layers built alike.
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
	if err := checkArgs(l); err != nil {
		return nil, err
	}
	return l, nil
}

// layerClasses are the layer classes by their Keras names, each with what
// makes one from its arguments (beside the layer, with its Config).
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
	"Permute":                permuteFromConfig,
	"Flatten":                flattenFromConfig,
	"Activation":             activationFromConfig,
	"InputLayer":             inputFromConfig,
	"Add":                    mergeFromConfig(mergeAdd),
	"Subtract":               mergeFromConfig(mergeSubtract),
	"Multiply":               mergeFromConfig(mergeMultiply),
	"Average":                mergeFromConfig(mergeAverage),
	"Maximum":                mergeFromConfig(mergeMaximum),
	"Minimum":                mergeFromConfig(mergeMinimum),
	"Concatenate":            mergeFromConfig(mergeConcatenate),
	"Dot":                    dotFromConfig,
	"MultiHeadAttention":     multiHeadAttentionFromConfig,
	"Attention":              attentionFromConfig,
	"AdditiveAttention":      additiveAttentionFromConfig,
	"ZeroPadding2D":          zeroPaddingFromConfig,
	"Cropping2D":             croppingFromConfig,
	"UpSampling2D":           upSamplingFromConfig,
	"Identity":               identityFromConfig,
	"ReLU":                   reluFromConfig,
	"LeakyReLU":              leakyReLUFromConfig,
	"ELU":                    eluFromConfig,
	"PReLU":                  preluFromConfig,
	"Rescaling":              rescalingFromConfig,
	"Masking":                maskingFromConfig,
	"Normalization":          normalizationFromConfig,
	"Resizing":               resizingFromConfig,
	"CenterCrop":             centerCropFromConfig,
	"RandomFlip":             randomFlipFromConfig,
	"RandomTranslation":      randomTranslationFromConfig,
	"RandomZoom":             randomZoomFromConfig,
	"RandomRotation":         randomRotationFromConfig,
	"RandomBrightness":       randomBrightnessFromConfig,
	"RandomContrast":         randomContrastFromConfig,
	"RandomCrop":             randomCropFromConfig,
	"SimpleRNN":              recurrentFromConfig(simpleRNNCell),
	"LSTM":                   recurrentFromConfig(lstmCell),
	"GRU":                    recurrentFromConfig(gruCell),
}

// ClassNames lists the Keras class names of the layers of this package,
// the classes FromConfig makes, sorted.
func ClassNames() []string { return classNames() }

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
