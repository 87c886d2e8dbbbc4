package losses

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/gokeras/gokeras/internal/formats/configargs"
)

// Config is a loss's configuration as Keras serializes one: its Keras
// class name and its arguments by their Keras names, values JSON can hold:
//
//	{"class_name": "CategoricalCrossentropy", "config": {"from_logits": false, "label_smoothing": 0.1}}
//
// It is the Config of packages layers, metrics and optim: ConfigOf gives
// it, FromConfig makes the loss again, and nn's Save writes it.
type Config struct {
	ClassName string         `json:"class_name"`
	Config    map[string]any `json:"config"`
}

// ConfigOf returns the configuration of l, one of this package's losses
// (a pointer to one too): CategoricalCrossentropy and BinaryCrossentropy
// have from_logits and label_smoothing, SparseCategoricalCrossentropy
// from_logits, Huber delta (1 for the zero value's default), the others
// no arguments. A loss defined outside this package has none.
func ConfigOf(l Loss) (Config, error) {
	if configargs.IsNil(l) {
		return Config{}, errors.New("no loss (nil)")
	}
	if v := reflect.ValueOf(l); v.Kind() == reflect.Pointer && !v.IsNil() {
		if e, ok := v.Elem().Interface().(Loss); ok {
			l = e
		}
	}
	var args map[string]any
	switch l := l.(type) {
	case CategoricalCrossentropy:
		args = map[string]any{"from_logits": l.FromLogits, "label_smoothing": l.LabelSmoothing}
	case BinaryCrossentropy:
		args = map[string]any{"from_logits": l.FromLogits, "label_smoothing": l.LabelSmoothing}
	case SparseCategoricalCrossentropy:
		args = map[string]any{"from_logits": l.FromLogits}
	case Huber:
		delta := l.Delta
		if delta == 0 {
			delta = 1
		}
		args = map[string]any{"delta": delta}
	default:
		args = map[string]any{}
	}
	for _, k := range known {
		if reflect.TypeOf(k.make()) == reflect.TypeOf(l) {
			return Config{ClassName: k.class, Config: args}, nil
		}
	}
	return Config{}, fmt.Errorf("loss %q is a %T, which has no config: use one of package losses to save the model's compile settings", l.Name(), l)
}

// FromConfig makes a loss from its configuration, as Keras'
// losses.deserialize does; arguments left out take Keras' defaults. An
// unknown class, an unknown argument or a value of the wrong type is an
// error that names it; the unknown class's error lists the known ones.
func FromConfig(c Config) (Loss, error) {
	k := -1
	classes := make([]string, len(known))
	for i, kn := range known {
		classes[i] = kn.class
		if kn.class == c.ClassName {
			k = i
		}
	}
	if k < 0 {
		slices.Sort(classes)
		return nil, fmt.Errorf("unknown loss class %q: the known loss classes are %s", c.ClassName, strings.Join(classes, ", "))
	}
	var l Loss
	var err error
	switch c.ClassName {
	case "CategoricalCrossentropy", "BinaryCrossentropy":
		var a struct {
			FromLogits     bool    `json:"from_logits"`
			LabelSmoothing float64 `json:"label_smoothing"`
		}
		if err = configargs.Decode(c.Config, &a); err == nil {
			if !(a.LabelSmoothing >= 0 && a.LabelSmoothing <= 1) {
				return nil, fmt.Errorf("%s config: label_smoothing must be in [0, 1], got %v", c.ClassName, a.LabelSmoothing)
			}
			l = CategoricalCrossentropy{FromLogits: a.FromLogits, LabelSmoothing: a.LabelSmoothing}
			if c.ClassName == "BinaryCrossentropy" {
				l = BinaryCrossentropy{FromLogits: a.FromLogits, LabelSmoothing: a.LabelSmoothing}
			}
		}
	case "SparseCategoricalCrossentropy":
		var a struct {
			FromLogits bool `json:"from_logits"`
		}
		if err = configargs.Decode(c.Config, &a); err == nil {
			l = SparseCategoricalCrossentropy{FromLogits: a.FromLogits}
		}
	case "Huber":
		a := struct {
			Delta float64 `json:"delta"`
		}{1}
		if err = configargs.Decode(c.Config, &a); err == nil {
			if !(a.Delta > 0) {
				return nil, fmt.Errorf("Huber config: delta must be positive, got %v", a.Delta)
			}
			l = Huber{Delta: a.Delta}
		}
	default:
		if err = configargs.Decode(c.Config, &struct{}{}); err == nil {
			l = known[k].make()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s config: %w", c.ClassName, err)
	}
	return l, nil
}
