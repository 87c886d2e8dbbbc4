package nn

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/gokeras/gokeras/internal/formats/shapes"
	"github.com/gokeras/gokeras/safetensors"
)

// TensorFlow.js layers models: a folder of model.json (the Keras topology
// and the weights manifest) and its binary weight shards, as
// tf.LayersModel.save and the tensorflowjs converter write them, and as
// package export/tfjs exports gokeras models. LoadModel reads them: the
// topology is a Keras 2 model config (kerasModelOf), and the weights are
// matched by their names, "<layer>/<weight>", which TensorFlow.js and
// gokeras give alike.

// tfjsModelFile is the name of a TensorFlow.js model's JSON in its folder.
const tfjsModelFile = "model.json"

// maxTFJSJSON bounds what is read of a model.json.
const maxTFJSJSON = 64 << 20

// tfjsManifest is model.json as LoadModel reads it.
type tfjsManifest struct {
	Format        string          `json:"format"`
	ModelTopology json.RawMessage `json:"modelTopology"`
	// TrainingConfig: a compiled model's settings, as Keras 2 writes
	// them (tf.LayersModel.save includes them).
	TrainingConfig  json.RawMessage `json:"trainingConfig"`
	WeightsManifest []struct {
		Paths   []string `json:"paths"`
		Weights []struct {
			Name         string          `json:"name"`
			Shape        []int           `json:"shape"`
			Dtype        string          `json:"dtype"`
			Quantization json.RawMessage `json:"quantization"`
		} `json:"weights"`
	} `json:"weightsManifest"`
}

// tfjsModelPath says whether path names a TensorFlow.js model: a folder
// holding model.json, or a .json file. It returns the folder as an fs.FS
// and the JSON's name in it.
func tfjsModelPath(p string) (fs.FS, string, bool) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, "", false
	}
	if info.IsDir() {
		if _, err := os.Stat(filepath.Join(p, tfjsModelFile)); err != nil {
			return nil, "", false
		}
		return os.DirFS(p), tfjsModelFile, true
	}
	if strings.EqualFold(filepath.Ext(p), ".json") {
		return os.DirFS(filepath.Dir(p)), filepath.Base(p), true
	}
	return nil, "", false
}

// loadTFJS makes the model of the TensorFlow.js model.json name in fsys
// (its shards beside it), built, with its weights, and its training
// settings (JSON, "" for none) for compileKeras; where names it in errors.
func loadTFJS(fsys fs.FS, name, where string, s Strategy) (*Sequential, string, error) {
	f, m, input, training, err := readTFJS(fsys, name, where)
	if err := agreeOnFile(s, f, err, where); err != nil {
		return nil, "", err
	}
	if err := m.Build(input...); err != nil {
		return nil, "", fmt.Errorf("%s: building the TensorFlow.js model: %w", where, err)
	}
	src, err := m.builtPlan().check(f, where)
	if err != nil {
		return nil, "", err
	}
	if err := m.copyWeights(src); err != nil {
		return nil, "", err
	}
	return m, training, nil
}

// readTFJS reads a TensorFlow.js model: the model its topology describes,
// not built, its input shape, its training settings (JSON, "" for none),
// and its weights by name, checked against the model's sizes before the
// shards are read.
func readTFJS(fsys fs.FS, name, where string) (f *safetensors.File, m *Sequential, input []int, training string, err error) {
	js, err := readBounded(fsys, name, maxTFJSJSON)
	if err != nil {
		return nil, nil, nil, "", fmt.Errorf("%s: %w", where, err)
	}
	var doc tfjsManifest
	if err := json.Unmarshal(js, &doc); err != nil {
		return nil, nil, nil, "", fmt.Errorf("%s: not a TensorFlow.js model.json: %v", where, err)
	}
	if doc.Format != "" && doc.Format != "layers-model" {
		return nil, nil, nil, "", fmt.Errorf("%s is a TensorFlow.js %s, not a layers model: gokeras reads layers models (tf.LayersModel.save, or the converter's keras output)", where, doc.Format)
	}
	if len(doc.ModelTopology) == 0 {
		return nil, nil, nil, "", fmt.Errorf("%s has no modelTopology: not a TensorFlow.js layers model (the JSON of Keras' model.to_json() is read by nn.ModelFromJSON)", where)
	}
	// The converter nests the Keras config in model_config; TensorFlow.js'
	// own save writes it as the topology itself.
	topology := doc.ModelTopology
	var nested struct {
		ModelConfig json.RawMessage `json:"model_config"`
	}
	if json.Unmarshal(topology, &nested) == nil && len(nested.ModelConfig) > 0 {
		topology = nested.ModelConfig
	}
	m, input, err = kerasModelOf(topology, where)
	if err != nil {
		return nil, nil, nil, "", err
	}
	plan, err := m.describedPlan(where, input)
	if err != nil {
		return nil, nil, nil, "", err
	}
	var declared []safetensors.Declared
	for _, g := range doc.WeightsManifest {
		for _, w := range g.Weights {
			switch {
			case w.Dtype != "float32":
				return nil, nil, nil, "", fmt.Errorf("%s: weight %q is %s: gokeras reads float32 weights", where, w.Name, w.Dtype)
			case len(w.Quantization) > 0 && string(w.Quantization) != "null":
				return nil, nil, nil, "", fmt.Errorf("%s: weight %q is quantized: convert the model without quantization", where, w.Name)
			}
			declared = append(declared, safetensors.Declared{Name: w.Name, Shape: w.Shape, Values: shapes.Size(w.Shape)})
		}
	}
	if err := plan.fits(nil, declared); err != nil {
		return nil, nil, nil, "", fmt.Errorf("%s: %w", where, err)
	}
	f = &safetensors.File{Metadata: map[string]string{}}
	dir := path.Dir(name)
	for gi, g := range doc.WeightsManifest {
		want := 0
		for _, w := range g.Weights {
			want += 4 * shapes.Size(w.Shape)
		}
		var data []byte
		for _, p := range g.Paths {
			if strings.Contains(p, "..") || path.IsAbs(p) {
				return nil, nil, nil, "", fmt.Errorf("%s: weight shard %q is not a file beside model.json", where, p)
			}
			part, err := readBounded(fsys, path.Join(dir, p), int64(want-len(data)))
			if err != nil {
				return nil, nil, nil, "", fmt.Errorf("%s: weight shard %s: %w", where, p, err)
			}
			data = append(data, part...)
		}
		if len(data) != want {
			return nil, nil, nil, "", fmt.Errorf("%s: the shards of weight group %d hold %d bytes, but its weights take %d: a shard is missing or damaged", where, gi+1, len(data), want)
		}
		for _, w := range g.Weights {
			n := shapes.Size(w.Shape)
			v := make([]float32, n)
			for i := range v {
				v[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
			}
			data = data[4*n:]
			f.Tensors = append(f.Tensors, safetensors.Tensor{Name: w.Name, Shape: w.Shape, Data: v})
		}
	}
	if !isNull(doc.TrainingConfig) {
		training = string(doc.TrainingConfig)
	}
	return f, m, input, training, nil
}

// readBounded reads the file name of fsys, refusing one larger than limit
// bytes before reading it.
func readBounded(fsys fs.FS, name string, limit int64) ([]byte, error) {
	file, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	if info.Size() > limit {
		return nil, fmt.Errorf("%s holds %d bytes, more than the %d expected", name, info.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(file, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, errors.New(name + " grew while it was read")
	}
	return data, nil
}
