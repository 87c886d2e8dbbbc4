package nn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/gokeras/gokeras/internal/sys/atomicfile"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/optim"
	"github.com/gokeras/gokeras/safetensors"
)

// What Save adds to the metadata keys of save_file.go.
const (
	metaModelConfig = metaPrefix + "model_config" // the model document, JSON
	kindModel       = "model"
	// modelFormatVersion is the newest version of the model document and
	// file layout LoadModel reads: Save writes version 1 for a Sequential
	// (sequentialFormatVersion) and 2 for a functional model
	// (functionalFormatVersion, see save_functional.go); a later gokeras
	// that changes them writes a higher one.
	modelFormatVersion = functionalFormatVersion
)

// modelDocument is the JSON document a model file holds in its metadata,
// laid out as Keras' model config: the architecture in config, the compile
// settings in compile_config.
type modelDocument struct {
	// FormatVersion is the file's model format version:
	// sequentialFormatVersion or functionalFormatVersion.
	FormatVersion int `json:"format_version"`
	// ClassName is "Sequential" or "Functional".
	ClassName string `json:"class_name"`
	// Config is a Sequential's architecture. For a functional model it
	// holds what the code that reads either kind needs (name, input
	// shape, seed, the layers' configs in the model's order), and
	// functional the config written in its place (MarshalJSON).
	Config     modelConfig `json:"config"`
	functional *functionalConfig
	// CompileConfig is nil for a model that was not compiled.
	CompileConfig *compileConfigDocument `json:"compile_config"`
	// IncludeOptimizer says the file holds the optimizer's state.
	IncludeOptimizer bool `json:"include_optimizer"`
}

// modelConfig is the architecture of a Sequential model.
type modelConfig struct {
	Name       string          `json:"name"`
	InputShape []int           `json:"input_shape"`
	Seed       *uint64         `json:"seed"` // SetSeed's, nil without one
	Layers     []layers.Config `json:"layers"`
}

// compileConfigDocument holds what Compile was given, device aside. A
// model of several outputs has Outputs instead of Loss and Metrics,
// written as Keras 3 writes such a model's compile_config: "loss" a list
// of each output's loss, "loss_weights" a list, "metrics" a list of each
// output's list (see outputs.go).
type compileConfigDocument struct {
	Optimizer optim.Config     `json:"optimizer"`
	Loss      losses.Config    `json:"loss"`
	Metrics   []metrics.Config `json:"metrics"`
	Outputs   *outputsConfig   `json:"-"`
}

// outputsConfig is the compile settings of each output of a model of
// several.
type outputsConfig struct {
	Losses  []losses.Config
	Weights []float64
	Metrics [][]metrics.Config
}

// SaveOption adjusts Save.
type SaveOption func(*saveOptions)

type saveOptions struct {
	includeOptimizer bool
	// at is where training stands, when the file is also a checkpoint
	// (AtCheckpoint).
	at *Checkpoint
}

// AtCheckpoint makes Save's file a checkpoint too: besides the whole
// model, it records where training stands (ck's Epoch, Step and
// Metadata, as SaveCheckpoint records them), so that LoadCheckpoint
// resumes from it exactly as from SaveCheckpoint's file while LoadModel
// still loads it. Keras' ModelCheckpoint saves whole models this way
// (package callbacks' ModelCheckpoint does, unless SaveWeightsOnly). The
// optimizer's state is written with it: IncludeOptimizer(false) is then
// an error.
func AtCheckpoint(ck Checkpoint) SaveOption {
	return func(o *saveOptions) { o.at = &ck }
}

// IncludeOptimizer says whether Save writes the optimizer's state (its
// step count, learning rate and slots), Keras' include_optimizer; it does
// unless told otherwise, as Keras does. Without it the file still holds
// the compile settings, so LoadModel compiles the model with a new
// optimizer of the same configuration, starting from step 0.
func IncludeOptimizer(include bool) SaveOption {
	return func(o *saveOptions) { o.includeOptimizer = include }
}

// Save writes the whole model to path, like Keras' model.save: what
// LoadModel needs to make it again without the code that defined it. The
// file is a safetensors file whose tensors are the weights, named as
// SaveWeights names them ("<layer>/kernel", ...), so LoadWeights and
// any safetensors reader read it too. Its metadata holds
//
//	gokeras.kind             "model"
//	gokeras.version          the model format version: "1" for a
//	                         Sequential, "2" for a functional model
//	gokeras.model            the model's name
//	gokeras.model_config     a JSON document: format_version, class_name
//	                         "Sequential" with config (name, input_shape,
//	                         seed, layers: each layer's layers.Config), or
//	                         "Functional" with Keras 3's functional config
//	                         (name, trainable, seed, layers: each with its
//	                         name and inbound nodes, input_layers,
//	                         output_layers; see save_functional.go),
//	                         compile_config (optimizer, loss and metrics,
//	                         as optim.ConfigOf, losses.ConfigOf and
//	                         metrics.ConfigOf give them; for a model of
//	                         several outputs, or one whose loss is
//	                         weighted, Keras 3's lists: loss and
//	                         loss_weights one per output, metrics a list
//	                         per output; null before Compile) and
//	                         include_optimizer
//
// and, unless IncludeOptimizer(false), the optimizer's state as a
// checkpoint holds it (see SaveCheckpoint): its slots as tensors
// "optimizer/<weight>/<slot>", and gokeras.optimizer,
// gokeras.optimizer.iterations and gokeras.optimizer.learning_rate; and
// with AtCheckpoint, where training stands, as a checkpoint records it
// (gokeras.epoch, gokeras.step and the checkpoint's own metadata).
//
// The model must be built, or declare its input shape. Every layer, the
// loss, the metrics and the optimizer must be this module's (a type
// defined elsewhere has no config: the error names it). The path is
// checked first, so that a directory or a missing folder fails before
// anything else; the file is replaced atomically, and weights or slots
// holding a NaN or an infinity are not written, as SaveWeights refuses
// them.
//
// A path ending in .keras is written as Keras 3's .keras archive instead
// (see SaveKeras), and one ending in .h5 or .hdf5 as Keras 2's HDF5 model
// file (model_config, training_config, model_weights): what
// keras.models.load_model and LoadModel read, without the optimizer's
// state; AtCheckpoint is then an error. A path ending in .weights.h5 is
// refused: that name is for SaveWeights.
//
// Under a strategy (WithStrategy) rank 0 writes the file; on the other
// ranks Save returns nil and writes nothing, without waiting for rank 0.
func (m *Sequential) Save(path string, opts ...SaveOption) error {
	if m == nil {
		return fmt.Errorf("save model: %w", ErrNilModel)
	}
	release, err := m.claim("save model", false)
	if err != nil {
		return err
	}
	defer release()
	o := saveOptions{includeOptimizer: true}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if err := CheckModelPath(path); err != nil {
		return fmt.Errorf("save model: %w", err)
	}
	if !m.writesFiles() {
		return nil // rank 0 writes (see distributed_files.go)
	}
	if err := atomicfile.Check(path); err != nil {
		return fmt.Errorf("save model: %w", err)
	}
	if isKerasModelPath(path) {
		if err := m.saveKerasArchive(path, o); err != nil {
			return fmt.Errorf("save model: %w", err)
		}
		return nil
	}
	if layout, ok := isKerasWeightsPath(path); ok && layout == kerasLayout2 {
		if err := m.saveKeras2Model(path, o); err != nil {
			return fmt.Errorf("save model: %w", err)
		}
		return nil
	}
	ts, meta, err := m.modelFile(o)
	if err == nil {
		err = m.writeTensors(path, ts, meta, nil)
	}
	if err != nil {
		return fmt.Errorf("save model: %w", err)
	}
	return nil
}

// CheckModelPath returns the error Save gives for path by its name alone:
// Save refuses a .weights.h5 name, which is Keras 3's name for a weights
// file (SaveWeights writes one); a .keras name is Keras 3's archive and a
// .h5 or .hdf5 name Keras 2's model file, which it writes. Callers that
// save later (a checkpoint callback) check their path with it before
// training starts.
func CheckModelPath(path string) error {
	if layout, keras := isKerasWeightsPath(path); keras && layout == kerasLayout3 {
		return fmt.Errorf("%s: a .weights.h5 name is Keras 3's for the weights alone, which SaveWeights writes; to save the whole model, name it .keras (Keras 3), .h5 (Keras 2) or .safetensors (gokeras)", path)
	}
	return nil
}

// SaveTo writes what Save writes to w, for a model kept elsewhere than on
// disk: sent over a network, or written once to be embedded in a program
// (go:embed) and read with LoadModelFS. Unlike Save it cannot be atomic:
// on an error, w may hold part of the file. It writes on every rank of a
// strategy.
func (m *Sequential) SaveTo(w io.Writer, opts ...SaveOption) error {
	if m == nil {
		return fmt.Errorf("save model: %w", ErrNilModel)
	}
	if w == nil {
		return errors.New("save model: no writer given")
	}
	release, err := m.claim("save model", false)
	if err != nil {
		return err
	}
	defer release()
	o := saveOptions{includeOptimizer: true}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	ts, meta, err := m.modelFile(o)
	if err == nil {
		err = safetensors.Write(w, ts, meta)
	}
	if err != nil {
		return fmt.Errorf("save model: %w", err)
	}
	return nil
}

// modelFile is what a model file holds: the weights (and the optimizer's
// state, if asked), and the metadata with the model's document.
func (m *Sequential) modelFile(o saveOptions) ([]safetensors.Tensor, map[string]string, error) {
	if err := m.ensureBuilt(); err != nil {
		return nil, nil, err
	}
	doc, err := m.document(o.includeOptimizer)
	if err != nil {
		return nil, nil, err
	}
	ts, err := m.weightTensors()
	if err != nil {
		return nil, nil, err
	}
	meta := map[string]string{}
	if o.at != nil {
		if !o.includeOptimizer {
			return nil, nil, errors.New("AtCheckpoint needs the optimizer's state to resume from: drop IncludeOptimizer(false)")
		}
		if err := checkpointMeta(*o.at, meta); err != nil {
			return nil, nil, err
		}
	}
	maps.Copy(meta, map[string]string{metaKind: kindModel, metaVersion: strconv.Itoa(doc.FormatVersion), metaModel: m.name})
	if doc.IncludeOptimizer {
		state, err := m.optimizerTensors(m.compiled.optimizer.(optim.Stateful), meta)
		if err != nil {
			return nil, nil, err
		}
		ts = append(ts, state...)
	}
	js, err := json.Marshal(doc)
	if err != nil {
		return nil, nil, fmt.Errorf("writing the model's config as JSON: %w", err)
	}
	meta[metaModelConfig] = string(js)
	return ts, meta, nil
}

// document describes the model: its architecture and, when compiled, its
// compile settings.
func (m *Sequential) document(includeOptimizer bool) (*modelDocument, error) {
	doc := &modelDocument{
		FormatVersion: sequentialFormatVersion,
		ClassName:     "Sequential",
		Config:        modelConfig{Name: m.name, InputShape: slices.Clone(m.inputShape), Layers: []layers.Config{}},
	}
	if m.seeded {
		seed := m.seed
		doc.Config.Seed = &seed
	}
	for i, l := range m.layers {
		c, err := layers.ConfigOf(l)
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", i+1, err)
		}
		doc.Config.Layers = append(doc.Config.Layers, c)
	}
	if m.graph != nil {
		if err := m.functionalDocument(doc); err != nil {
			return nil, err
		}
	}
	if m.compiled == nil {
		return doc, nil
	}
	cc := &compileConfigDocument{Metrics: []metrics.Config{}}
	var err error
	if cc.Optimizer, err = optim.ConfigOf(m.compiled.optimizer); err != nil {
		return nil, fmt.Errorf("the optimizer: %w", err)
	}
	heads := m.compiled.heads
	if len(heads) == 1 && heads[0].weight == 1 {
		if cc.Loss, err = losses.ConfigOf(heads[0].loss); err != nil {
			return nil, fmt.Errorf("the loss: %w", err)
		}
	} else {
		cc.Outputs = &outputsConfig{Metrics: make([][]metrics.Config, len(heads))}
		for i, h := range heads {
			c, err := losses.ConfigOf(h.loss)
			if err != nil {
				return nil, fmt.Errorf("the loss of output %q: %w", h.name, err)
			}
			cc.Outputs.Losses = append(cc.Outputs.Losses, c)
			cc.Outputs.Weights = append(cc.Outputs.Weights, h.weight)
			cc.Outputs.Metrics[i] = []metrics.Config{}
		}
	}
	n := 0 // metrics proper
	for i, mt := range m.compiled.metrics {
		if _, ok := mt.(*outputLoss); ok {
			continue
		}
		n++
		c, err := metrics.ConfigOf(mt)
		if err != nil {
			return nil, fmt.Errorf("metric %d (%s): %w", n, m.compiled.metricNames[i], err)
		}
		if cc.Outputs != nil {
			h := m.compiled.metricOut[i]
			cc.Outputs.Metrics[h] = append(cc.Outputs.Metrics[h], c)
			continue
		}
		cc.Metrics = append(cc.Metrics, c)
	}
	doc.CompileConfig = cc
	if includeOptimizer {
		if _, ok := m.compiled.optimizer.(optim.Stateful); !ok {
			return nil, fmt.Errorf("optimizer %s cannot save its state (it does not implement optim.Stateful): save with IncludeOptimizer(false)", m.compiled.optimizer.Name())
		}
		doc.IncludeOptimizer = true
	}
	return doc, nil
}

// LoadOption adjusts LoadModel.
type LoadOption func(*loadOptions)

type loadOptions struct {
	compile        bool
	compileOptions []CompileOption
}

// LoadCompiled says whether LoadModel compiles a model saved compiled,
// Keras' compile argument of load_model; it does unless told otherwise.
// An uncompiled model has its architecture and weights, and the optimizer
// state in the file is not read: Compile it to train, evaluate or predict.
func LoadCompiled(compile bool) LoadOption {
	return func(o *loadOptions) { o.compile = compile }
}

// CompileOptions are given to the Compile of the model LoadModel makes:
// OnDevice to place it, SoftPlacement, LogDevicePlacement.
func CompileOptions(opts ...CompileOption) LoadOption {
	return func(o *loadOptions) { o.compileOptions = append(o.compileOptions, opts...) }
}

// LoadModel makes again the model Save wrote to path, like Keras'
// keras.models.load_model: the same layers with the same names and
// arguments, built for the same input shape, with the saved weights; and,
// when it was saved compiled, compiled with the same loss, metrics and
// optimizer (unless LoadCompiled(false)) on the device Compile picks by
// default (CompileOptions(OnDevice(...)) picks another), the optimizer's
// state restored when the file holds it. Predict and Evaluate then give
// what the saved model gave, and Fit goes on as the saved model would
// have: on the CPU, with the same Seed, bit for bit.
//
// It is LoadModelContext with context.Background(), so no device scope
// applies.
//
// Given a strategy (CompileOptions(WithStrategy(s))), LoadModel is
// collective, as LoadWeights is: every rank reads the file, and every rank
// fails unless all of them read the same content.
//
// Nothing is half loaded: the file is checked whole, and each way it can
// be wrong is an error that says what is wrong and what to do: a file
// that is not a model (weights only, a checkpoint), a model format newer
// than this gokeras reads (both versions named), a damaged JSON config, a
// layer, loss, metric, optimizer or schedule class this gokeras does not
// know (the known ones listed), weights missing, extra or of the wrong
// shape for the layers, and values that are NaN or infinite. A functional
// model's graph is made again from its config as Keras makes it (each
// layer called once the calls it takes its inputs from are made) and is
// refused, naming the layer and its call, when a call names a layer the
// config does not have, a node or tensor index out of range, or tensors of
// other shapes than their layers make; and when calls form a cycle, or do
// not lead to an output.
//
// LoadModel also reads TensorFlow.js layers models: path a folder holding
// model.json and its weight shards, or the model.json itself (what
// tf.LayersModel.save, the tensorflowjs converter and package export/tfjs
// write), its topology read as a Keras model config (below) and its
// float32 weights matched by name; compiled as a Keras file is.
//
// LoadModel also reads Keras' own model files, told by their content: a
// Keras 2 .h5 model file (model.save("m.h5"): its model_config and
// model_weights) and a Keras 3 .keras archive (its config.json and
// model.weights.h5), for Sequential and functional models of the layers
// gokeras has. The model comes back built, with the file's weights, and
// compiled with the file's training settings (Keras 3's compile_config,
// Keras 2's training_config) as Keras' load_model compiles it, unless
// LoadCompiled(false): their optimizer (with SGD's and Adam's state from
// a .keras archive; other state is not read, and training goes on from
// fresh slots), loss and metrics, each output's own when given per output
// (lists in output order, or objects by output name, with loss weights);
// a file that names no loss leaves the model uncompiled, and settings
// gokeras cannot follow (weighted metrics, an exponential moving average
// of the weights) are an error that says to load it uncompiled. A Keras setting
// gokeras cannot honour (channels_first data,
// a constraint, a mixed-precision policy, a custom or unknown layer, a
// subclassed model) is an error naming the layer, the
// argument and its value: nothing is skipped silently. Initializers in the
// config are not read: the weights come from the file.
func LoadModel(path string, opts ...LoadOption) (*Sequential, error) {
	return LoadModelContext(context.Background(), path, opts...)
}

// LoadModelContext is LoadModel whose Compile is CompileContext with ctx,
// so that a device scope ctx carries (device.With) places the model.
func LoadModelContext(ctx context.Context, path string, opts ...LoadOption) (*Sequential, error) {
	if fsys, name, ok := tfjsModelPath(path); ok {
		return loadTFJSModel(ctx, fsys, name, path, opts)
	}
	return loadModelFrom(ctx, pathSource(path), opts)
}

// loadTFJSModel is LoadModel of a TensorFlow.js layers model.
func loadTFJSModel(ctx context.Context, fsys fs.FS, name, where string, opts []LoadOption) (*Sequential, error) {
	o := loadOptions{compile: true}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	m, training, err := loadTFJS(fsys, name, where, strategyOf(o.compileOptions))
	if err == nil {
		m, err = m.compileKeras(ctx, training, where, o)
	}
	if err != nil {
		return nil, fmt.Errorf("load model: %w", err)
	}
	return m, nil
}

// LoadModelFrom is LoadModel of the file r reads (all of it, into memory):
// a model received over a network, say.
func LoadModelFrom(r io.Reader, opts ...LoadOption) (*Sequential, error) {
	return loadModelFrom(context.Background(), readerSource(r, "the model read"), opts)
}

// LoadModelFS is LoadModel of the file name in fsys, such as a model
// embedded in the program:
//
//	//go:embed model.safetensors
//	var files embed.FS
//	model, err := nn.LoadModelFS(files, "model.safetensors")
func LoadModelFS(fsys fs.FS, name string, opts ...LoadOption) (*Sequential, error) {
	if fsys != nil {
		if _, err := fs.Stat(fsys, path.Join(name, tfjsModelFile)); err == nil {
			return loadTFJSModel(context.Background(), fsys, path.Join(name, tfjsModelFile), name, opts)
		} else if info, err := fs.Stat(fsys, name); err == nil && !info.IsDir() && strings.EqualFold(path.Ext(name), ".json") {
			return loadTFJSModel(context.Background(), fsys, name, name, opts)
		}
	}
	return loadModelFrom(context.Background(), fsSource(fsys, name), opts)
}

// loadModelFrom is LoadModelContext of src.
func loadModelFrom(ctx context.Context, src fileSource, opts []LoadOption) (*Sequential, error) {
	path := src.name
	o := loadOptions{compile: true}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	// The file's config is read before its tensors, to bound them (see
	// weightPlan.fits); the model it describes is then the one loaded.
	var d described
	var badConfig error // names the file itself
	f, err := readAgreed(strategyOf(o.compileOptions), src, func(meta map[string]string, declared []safetensors.Declared) error {
		var err error
		if d, err = describe(meta, path); err != nil {
			badConfig = err
			return err
		}
		return d.plan.fits(meta, declared)
	})
	if badConfig != nil {
		return nil, fmt.Errorf("load model: %w", badConfig)
	}
	if err != nil {
		return nil, fmt.Errorf("load model: %w", err)
	}
	m, err := loadModel(ctx, f, path, d, o)
	if err != nil {
		return nil, fmt.Errorf("load model: %w", err)
	}
	return m, nil
}

// saveAgain is the fix for a file whose content contradicts itself.
const saveAgain = "the file is damaged or was edited: save the model again from the code that made it"

// described is what a model file's metadata describes: its document, the
// model (not built) and the weights that model makes.
type described struct {
	doc  *modelDocument
	m    *Sequential
	plan weightPlan
	// kerasCompile is a Keras file's training settings (JSON), "" for
	// none or for a gokeras file.
	kerasCompile string
}

// describe reads the model a file's metadata describes, refusing a config
// that describes none.
func describe(meta map[string]string, path string) (described, error) {
	if meta[metaKind] == kindKeras {
		return describeKeras(meta, path)
	}
	doc, err := readDocument(meta, path)
	if err != nil {
		return described{}, err
	}
	m, err := modelOf(doc, path)
	if err != nil {
		return described{}, err
	}
	plan, err := m.describedPlan(path, doc.Config.InputShape)
	if err != nil {
		return described{}, err
	}
	return described{doc: doc, m: m, plan: plan}, nil
}

// loadModel makes the model f, read from path, describes (d).
func loadModel(ctx context.Context, f *safetensors.File, path string, d described, o loadOptions) (*Sequential, error) {
	doc, m := d.doc, d.m
	if f.Metadata[metaKind] == kindKeras {
		if _, err := m.loadKerasWeights(f, path, doc.Config.InputShape); err != nil {
			return nil, err
		}
		m, err := m.compileKeras(ctx, d.kerasCompile, path, o)
		if err != nil || m.compiled == nil {
			return m, err
		}
		if err := m.restoreKerasOptimizer(f, path); err != nil {
			m.Close()
			return nil, err
		}
		return m, nil
	}
	src, err := m.buildChecked(f, path, doc.Config.InputShape, d.plan)
	if err != nil {
		return nil, err
	}
	hasState := slices.ContainsFunc(f.Tensors, func(t safetensors.Tensor) bool { return strings.HasPrefix(t.Name, optimizerPrefix) })
	switch {
	case hasState && !doc.IncludeOptimizer:
		return nil, fmt.Errorf("%s holds optimizer tensors but its config says it has no optimizer state (include_optimizer false); %s", path, saveAgain)
	case doc.IncludeOptimizer && doc.CompileConfig == nil:
		return nil, fmt.Errorf("%s says it holds an optimizer's state but has no compile settings; %s", path, saveAgain)
	}
	if doc.CompileConfig == nil || !o.compile {
		if err := m.copyWeights(src); err != nil {
			return nil, err
		}
		return m, nil
	}
	opt, loss, ms, outOpts, err := compileSettings(doc.CompileConfig, m.OutputNames(), path)
	if err != nil {
		return nil, err
	}
	var state *optim.State
	if doc.IncludeOptimizer {
		st, err := m.readOptimizerState(f, opt, modelFile(path))
		if err != nil {
			return nil, err
		}
		state = &st
	}
	if err := m.CompileContext(ctx, opt, loss, ms, append(outOpts, o.compileOptions...)...); err != nil {
		return nil, err
	}
	if state != nil {
		stateful, ok := opt.(optim.Stateful)
		if !ok {
			return nil, fmt.Errorf("optimizer %s cannot restore its state (it does not implement optim.Stateful): load with LoadCompiled(false) and compile it yourself", opt.Name())
		}
		if err := stateful.SetState(*state); err != nil {
			return nil, fmt.Errorf("%s: %w; %s", path, err, saveAgain)
		}
	}
	if err := m.copyWeights(src); err != nil {
		return nil, err
	}
	return m, nil
}

// buildChecked builds m for input, after checking that f, read from
// path, holds the weights plan says its layers will make, each of the
// shape it will have, and none other: a config asking for layers whose
// weights the file does not hold allocates nothing. It returns the
// weights in the model's order.
func (m *Sequential) buildChecked(f *safetensors.File, path string, input []int, plan weightPlan) ([]safetensors.Tensor, error) {
	if _, err := plan.check(f, path); err != nil {
		return nil, err
	}
	if err := m.Build(input...); err != nil {
		return nil, fmt.Errorf("%s: %w; %s", path, err, saveAgain)
	}
	src, err := m.builtPlan().check(f, path)
	if err != nil {
		return nil, fmt.Errorf("%w; %s", err, saveAgain)
	}
	return src, nil
}

// readDocument checks that the metadata is a model's, of a format version
// this gokeras reads, and decodes its document.
func readDocument(meta map[string]string, path string) (*modelDocument, error) {
	switch kind := meta[metaKind]; kind {
	case kindModel:
	case kindWeights:
		return nil, fmt.Errorf("%s holds weights only (SaveWeights wrote it), not a whole model: make the model in code and call LoadWeights, or write the file with Save", path)
	case kindCheckpoint:
		return nil, fmt.Errorf("%s is a training checkpoint (SaveCheckpoint wrote it), not a whole model: make and compile the model in code and call LoadCheckpoint, or write the file with Save", path)
	case kindKeras:
		return nil, fmt.Errorf("%s is a Keras file, not a gokeras model file: LoadModel reads it (and LoadWeights its weights)", path)
	default:
		return nil, fmt.Errorf("%s is a safetensors file but not a gokeras model (its metadata has no %s %q): write one with Save", path, metaKind, kindModel)
	}
	version, err := strconv.Atoi(meta[metaVersion])
	if err != nil || version < 1 {
		return nil, fmt.Errorf("%s: metadata %s is %q, not a model format version; %s", path, metaVersion, meta[metaVersion], saveAgain)
	}
	if version > modelFormatVersion {
		return nil, fmt.Errorf("%s was written by a newer gokeras, in model format version %d; this gokeras reads model format version %d: update gokeras to load it", path, version, modelFormatVersion)
	}
	js, ok := meta[metaModelConfig]
	if !ok {
		return nil, fmt.Errorf("%s has no model config (metadata %s); %s", path, metaModelConfig, saveAgain)
	}
	// The document, its config left raw: what it is depends on class_name.
	dec := json.NewDecoder(strings.NewReader(js))
	dec.UseNumber() // keep every digit of seeds and other integers
	dec.DisallowUnknownFields()
	var raw struct {
		FormatVersion    int                    `json:"format_version"`
		ClassName        string                 `json:"class_name"`
		Config           json.RawMessage        `json:"config"`
		CompileConfig    *compileConfigDocument `json:"compile_config"`
		IncludeOptimizer bool                   `json:"include_optimizer"`
	}
	invalid := func(err error) error {
		return fmt.Errorf("%s: the model config (metadata %s) is not valid: %v; %s", path, metaModelConfig, err, saveAgain)
	}
	if err := dec.Decode(&raw); err != nil {
		return nil, invalid(err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: the model config (metadata %s) has more after its JSON object; %s", path, metaModelConfig, saveAgain)
	}
	doc := modelDocument{FormatVersion: raw.FormatVersion, ClassName: raw.ClassName, CompileConfig: raw.CompileConfig, IncludeOptimizer: raw.IncludeOptimizer}
	if doc.FormatVersion != version {
		return nil, fmt.Errorf("%s: the model config has format_version %d, but the file is of model format version %d; %s",
			path, doc.FormatVersion, version, saveAgain)
	}
	if len(raw.Config) == 0 {
		raw.Config = json.RawMessage("null")
	}
	switch doc.ClassName {
	case "Sequential":
		if err := decodeStrict(raw.Config, &doc.Config); err != nil {
			return nil, invalid(err)
		}
	case functionalClass:
		if version < functionalFormatVersion {
			return nil, fmt.Errorf("%s: the model config is of class %s, but the file is of model format version %d, which has no functional models (version %d has); %s",
				path, functionalClass, version, functionalFormatVersion, saveAgain)
		}
		var fc functionalConfig
		if err := decodeStrict(raw.Config, &fc); err != nil {
			return nil, invalid(err)
		}
		doc.functional = &fc
		doc.Config = modelConfig{Name: fc.Name, Seed: fc.Seed}
	default:
		return nil, fmt.Errorf("%s: the model config is of class_name %q, not a model class gokeras knows (Sequential, %s); %s", path, doc.ClassName, functionalClass, saveAgain)
	}
	return &doc, nil
}

// modelOf makes the model a document describes, not built yet; for a
// functional model, it completes doc.Config (see functionalModelOf).
func modelOf(doc *modelDocument, path string) (*Sequential, error) {
	if doc.functional != nil {
		return functionalModelOf(doc, path)
	}
	c := doc.Config
	m := NewSequential()
	if c.Name != "" {
		m.SetName(c.Name)
	}
	if c.Seed != nil {
		m.SetSeed(*c.Seed)
	}
	for i, lc := range c.Layers {
		l, err := layers.FromConfig(lc)
		if err != nil {
			return nil, fmt.Errorf("%s: layer %d of model %q: %w: was the file written by a newer gokeras (then update gokeras), or edited (then save the model again)?", path, i+1, m.name, err)
		}
		// Appended as they come: a leading InputLayer saved among the
		// layers stays one, as it was in the saved model.
		if l.Name() == "" {
			l.SetName(m.autoName(l.Type()))
		}
		m.layers = append(m.layers, l)
	}
	return m, nil
}

// compileSettings makes the optimizer, loss and metrics a model was
// compiled with, and for a model of several outputs (named outputs) the
// options that give each output its loss, weight and metrics.
func compileSettings(cc *compileConfigDocument, outputs []string, path string) (optim.Optimizer, losses.Loss, []metrics.Metric, []CompileOption, error) {
	newer := "was the file written by a newer gokeras (then update gokeras), or edited (then save the model again)?"
	opt, err := optim.FromConfig(cc.Optimizer)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("%s: the optimizer: %w: %s", path, err, newer)
	}
	metricsOf := func(cs []metrics.Config, what string) ([]metrics.Metric, error) {
		var ms []metrics.Metric
		for i, c := range cs {
			mt, err := metrics.FromConfig(c)
			if err != nil {
				return nil, fmt.Errorf("%s: %smetric %d: %w: %s", path, what, i+1, err, newer)
			}
			ms = append(ms, mt)
		}
		return ms, nil
	}
	oc := cc.Outputs
	if oc == nil {
		if len(outputs) > 1 {
			return nil, nil, nil, nil, fmt.Errorf("%s: the model has %d outputs but its compile settings have one loss: %s", path, len(outputs), saveAgain)
		}
		loss, err := losses.FromConfig(cc.Loss)
		if err != nil {
			return nil, nil, nil, nil, fmt.Errorf("%s: the loss: %w: %s", path, err, newer)
		}
		ms, err := metricsOf(cc.Metrics, "")
		return opt, loss, ms, nil, err
	}
	if len(oc.Losses) != len(outputs) || len(oc.Weights) != len(outputs) || len(oc.Metrics) != len(outputs) {
		return nil, nil, nil, nil, fmt.Errorf("%s: the model has %d outputs but its compile settings have %d losses, %d loss weights and %d lists of metrics; %s",
			path, len(outputs), len(oc.Losses), len(oc.Weights), len(oc.Metrics), saveAgain)
	}
	ls := make([]losses.Loss, len(outputs))
	opts := []CompileOption{LossWeights(oc.Weights...)}
	for i, name := range outputs {
		if ls[i], err = losses.FromConfig(oc.Losses[i]); err != nil {
			return nil, nil, nil, nil, fmt.Errorf("%s: the loss of output %q: %w: %s", path, name, err, newer)
		}
		ms, err := metricsOf(oc.Metrics[i], fmt.Sprintf("output %q: ", name))
		if err != nil {
			return nil, nil, nil, nil, err
		}
		opts = append(opts, MetricsFor(name, ms...))
	}
	return opt, nil, nil, append(opts, OutputLosses(ls...)), nil
}

// ReadModelConfig returns the JSON document a model file holds (see
// Save), indented, without reading its tensors: to see what a file holds
// before loading it.
func ReadModelConfig(path string) ([]byte, error) {
	meta, err := safetensors.ReadMetadata(path)
	if err != nil {
		return nil, fmt.Errorf("read model config: %w", err)
	}
	if _, err := readDocument(meta, path); err != nil {
		return nil, fmt.Errorf("read model config: %w", err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, []byte(meta[metaModelConfig]), "", "  "); err != nil {
		return nil, fmt.Errorf("read model config: %s: %w", path, err)
	}
	return out.Bytes(), nil
}
