package metrics

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gokeras/gokeras/internal/formats/configargs"
)

// Config is a metric's configuration as Keras serializes one: its Keras
// class name and its arguments by their Keras names, values JSON can hold:
//
//	{"class_name": "Precision", "config": {"name": "precision", "thresholds": 0.7, "top_k": null, "class_id": 2}}
//
// It is the Config of packages layers, losses and optim: ConfigOf gives
// it, FromConfig makes the metric again (with nothing accumulated), and
// nn's Save writes it.
//
// Keras' "accuracy", which is a string of compile and no class, has the
// class name "accuracy". Every metric has the argument name, the key it is
// reported under: its Keras name, or for Accuracy, MeanAbsoluteError and
// MeanSquaredError the alias Get was given ("acc", "mae", "mse").
type Config struct {
	ClassName string         `json:"class_name"`
	Config    map[string]any `json:"config"`
}

// accuracyClass is the class name of Keras' "accuracy".
const accuracyClass = "accuracy"

// ConfigOf returns the configuration of m, one of this package's metrics;
// the values of the fields whose zero value means a Keras default are that
// default (BinaryAccuracy's threshold 0.5, the top-k metrics' k 5, AUC's
// num_thresholds 200, curve "ROC" and summation_method "interpolation"),
// and nil (Keras' None) where the default is None (Precision's and
// Recall's thresholds, top_k and class_id, F1Score's average and
// threshold). A metric defined outside this package has none, and an AUC
// with a curve or summation method it does not know is an error.
func ConfigOf(m Metric) (Config, error) {
	if configargs.IsNil(m) {
		return Config{}, errors.New("no metric (nil)")
	}
	args := map[string]any{"name": m.Name()}
	var class string
	switch m := m.(type) {
	case *Accuracy:
		class = accuracyClass
	case *CategoricalAccuracy:
		class = "CategoricalAccuracy"
	case *SparseCategoricalAccuracy:
		class = "SparseCategoricalAccuracy"
	case *BinaryAccuracy:
		class = "BinaryAccuracy"
		threshold := m.Threshold
		if threshold == 0 {
			threshold = 0.5
		}
		args["threshold"] = float32Value(threshold)
	case *TopKCategoricalAccuracy:
		class = "TopKCategoricalAccuracy"
		args["k"] = m.K
		if m.K == 0 {
			args["k"] = 5
		}
	case *SparseTopKCategoricalAccuracy:
		class = "SparseTopKCategoricalAccuracy"
		args["k"] = m.K
		if m.K == 0 {
			args["k"] = 5
		}
	case *Precision:
		class = "Precision"
		confusionConfig(args, m.Threshold, m.TopK, m.ClassID)
	case *Recall:
		class = "Recall"
		confusionConfig(args, m.Threshold, m.TopK, m.ClassID)
	case *AUC:
		class = "AUC"
		c, err := m.config()
		if err != nil {
			return Config{}, err
		}
		curve := "ROC"
		if c.pr {
			curve = "PR"
		}
		args["num_thresholds"], args["curve"], args["summation_method"] = c.n, curve, c.method
		args["multi_label"], args["from_logits"] = m.MultiLabel, m.FromLogits
	case *F1Score:
		class = "F1Score"
		args["average"], args["threshold"] = nil, nil
		if m.Average != "" {
			args["average"] = m.Average
		}
		if m.Threshold != 0 {
			args["threshold"] = float32Value(m.Threshold)
		}
	case *MeanAbsoluteError:
		class = "MeanAbsoluteError"
	case *MeanSquaredError:
		class = "MeanSquaredError"
	case *RootMeanSquaredError:
		class = "RootMeanSquaredError"
	default:
		return Config{}, fmt.Errorf("metric %q is a %T, which has no config: use one of package metrics to save the model's compile settings", m.Name(), m)
	}
	return Config{ClassName: class, Config: args}, nil
}

// confusionConfig adds Precision's and Recall's arguments.
func confusionConfig(args map[string]any, threshold float32, topK int, classID *int) {
	args["thresholds"], args["top_k"], args["class_id"] = nil, nil, nil
	if threshold != 0 {
		args["thresholds"] = float32Value(threshold)
	}
	if topK != 0 {
		args["top_k"] = topK
	}
	if classID != nil {
		args["class_id"] = *classID
	}
}

// float32Value is x as the float64 of its shortest decimal form, which
// JSON writes as that decimal and which reads back as x.
func float32Value(x float32) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(float64(x), 'g', -1, 32), 64)
	return v
}

// FromConfig makes a metric from its configuration, with nothing
// accumulated, as Keras' metrics.deserialize does; arguments left out take
// Keras' defaults. An unknown class, an unknown argument, a value of the
// wrong type or a name the metric cannot be reported under is an error
// that names it; the unknown class's error lists the known ones.
func FromConfig(c Config) (Metric, error) {
	if !slices.Contains(metricClasses(), c.ClassName) {
		return nil, fmt.Errorf("unknown metric class %q: the known metric classes are %s", c.ClassName, strings.Join(metricClasses(), ", "))
	}
	m, err := fromConfig(c)
	if err != nil {
		return nil, fmt.Errorf("%s config: %w", c.ClassName, err)
	}
	return m, nil
}

func fromConfig(c Config) (Metric, error) {
	var m Metric
	var args any // the class's arguments besides name
	switch c.ClassName {
	case accuracyClass:
		m = &Accuracy{}
	case "CategoricalAccuracy":
		m = &CategoricalAccuracy{}
	case "SparseCategoricalAccuracy":
		m = &SparseCategoricalAccuracy{}
	case "BinaryAccuracy":
		a := &BinaryAccuracy{}
		m, args = a, &struct {
			Threshold *float32 `json:"threshold"`
		}{&a.Threshold}
	case "TopKCategoricalAccuracy":
		a := &TopKCategoricalAccuracy{}
		m, args = a, &struct {
			K *int `json:"k"`
		}{&a.K}
	case "SparseTopKCategoricalAccuracy":
		a := &SparseTopKCategoricalAccuracy{}
		m, args = a, &struct {
			K *int `json:"k"`
		}{&a.K}
	case "Precision":
		p := &Precision{}
		m, args = p, &confusionArgs{&p.Threshold, &p.TopK, &p.ClassID}
	case "Recall":
		r := &Recall{}
		m, args = r, &confusionArgs{&r.Threshold, &r.TopK, &r.ClassID}
	case "AUC":
		a := &AUC{}
		m, args = a, &struct {
			NumThresholds   *int    `json:"num_thresholds"`
			Curve           *string `json:"curve"`
			SummationMethod *string `json:"summation_method"`
			MultiLabel      *bool   `json:"multi_label"`
			FromLogits      *bool   `json:"from_logits"`
		}{&a.NumThresholds, &a.Curve, &a.SummationMethod, &a.MultiLabel, &a.FromLogits}
	case "F1Score":
		f := &F1Score{}
		m, args = f, &struct {
			Average   *string  `json:"average"`
			Threshold *float32 `json:"threshold"`
		}{&f.Average, &f.Threshold}
	case "MeanAbsoluteError":
		m = &MeanAbsoluteError{}
	case "MeanSquaredError":
		m = &MeanSquaredError{}
	case "RootMeanSquaredError":
		m = &RootMeanSquaredError{}
	default:
		return nil, errors.New("unknown metric class")
	}
	// The arguments are read into the fields of m through args: a null
	// leaves a field at its zero value, Keras' default.
	rest := map[string]any{}
	for k, v := range c.Config {
		if k != "name" {
			rest[k] = v
		}
	}
	if args == nil {
		args = &struct{}{}
	}
	if err := configargs.Decode(rest, args); err != nil {
		return nil, err
	}
	if err := setName(m, c.Config["name"]); err != nil {
		return nil, err
	}
	if a, ok := m.(*AUC); ok {
		if _, err := a.config(); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// confusionArgs are the arguments of Precision and Recall.
type confusionArgs struct {
	Thresholds *float32 `json:"thresholds"`
	TopK       *int     `json:"top_k"`
	ClassID    **int    `json:"class_id"`
}

// metricClasses lists the classes FromConfig knows, sorted.
func metricClasses() []string {
	var classes []string
	for _, k := range known {
		if k.class != "" {
			classes = append(classes, k.class)
		}
	}
	classes = append(classes, accuracyClass)
	slices.Sort(classes)
	return classes
}

// setName gives m the name a config asks for: none, or its Keras name, or
// one of the aliases it is reported under when Get is given one.
func setName(m Metric, name any) error {
	if name == nil {
		return nil
	}
	s, ok := name.(string)
	if !ok {
		return fmt.Errorf("argument \"name\" is %v, not a string", name)
	}
	if s == "" || s == m.Name() {
		return nil
	}
	switch m := m.(type) {
	case *Accuracy:
		if s == "acc" {
			m.name = s
			return nil
		}
	case *MeanAbsoluteError:
		if s == "mae" {
			m.name = s
			return nil
		}
	case *MeanSquaredError:
		if s == "mse" {
			m.name = s
			return nil
		}
	}
	return fmt.Errorf("name %q: this metric is reported as %q only (or under the alias Get takes for it: acc, mae, mse), and gokeras cannot rename it", s, m.Name())
}
