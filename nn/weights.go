package nn

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/gokeras/gokeras/internal/atomicfile"
	"github.com/gokeras/gokeras/internal/shapes"
	"github.com/gokeras/gokeras/optim"
	"github.com/gokeras/gokeras/safetensors"
	"gorgonia.org/tensor"
)

// Metadata keys gokeras writes into the "__metadata__" of its files.
const (
	metaPrefix        = "gokeras."
	metaKind          = metaPrefix + "kind" // "weights" or "checkpoint"
	metaVersion       = metaPrefix + "version"
	metaModel         = metaPrefix + "model"
	metaEpoch         = metaPrefix + "epoch"
	metaStep          = metaPrefix + "step"
	metaOptimizer     = metaPrefix + "optimizer"
	metaIterations    = metaPrefix + "optimizer.iterations"
	metaLearningRate  = metaPrefix + "optimizer.learning_rate"
	optimizerPrefix   = "optimizer/"
	kindWeights       = "weights"
	kindCheckpoint    = "checkpoint"
	checkpointVersion = "1"
)

// weight is one of the model's weight tensors with its file name.
type weight struct {
	name      string // "<layer>/kernel", "<layer>/bias"
	value     *tensor.Dense
	trainable bool // false for state such as BatchNormalization's moving statistics
}

// weights lists the model's weights in layer order. It is the one place
// that reads the weights off the layers.
func (m *Sequential) weights() []weight {
	var ws []weight
	for _, l := range m.layers {
		for _, p := range l.Params() {
			ws = append(ws, weight{name: l.Name() + "/" + p.Name, value: p.Value, trainable: !p.NonTrainable})
		}
	}
	return ws
}

// syncWeights brings the weights and the optimizer's slots back to the
// host when the model's machines keep them on their device (a GPU keeps
// them there for the whole fit). Every host read of the weights calls it
// first, and so does the optimizer's State (see Compile).
func (m *Sequential) syncWeights() error {
	if m.compiled == nil || m.compiled.state == nil {
		return nil
	}
	if err := m.compiled.state.Sync(); err != nil {
		return fmt.Errorf("copying the weights back from %s: %w", m.compiled.device.Short(), err)
	}
	return nil
}

// weightsWritten tells the model that its host weights changed: machines
// holding device copies are dropped, and the next step binds new ones that
// start from the host values. Every host write of the weights calls it.
func (m *Sequential) weightsWritten() error {
	if err := m.closePrograms(); err != nil {
		return fmt.Errorf("releasing the machines that held the old weights: %w", err)
	}
	return nil
}

// weightShape writes a weight's shape as Python prints a tuple: (3072, 3000), (10,).
func weightShape(shape []int) string {
	s := strings.TrimPrefix(shapes.String(shape), "(None")
	s = strings.TrimPrefix(strings.TrimPrefix(s, ","), " ")
	if s == ")" {
		return "()"
	}
	return "(" + s
}

// GetWeights returns copies of the model's weights in layer order, each
// layer's kernel then bias, like Keras' get_weights.
func (m *Sequential) GetWeights() ([]*tensor.Dense, error) {
	if m == nil {
		return nil, fmt.Errorf("get weights: %w", ErrNilModel)
	}
	release, err := m.claim("get weights", false)
	if err != nil {
		return nil, err
	}
	defer release()
	if err := m.ensureBuilt(); err != nil {
		return nil, fmt.Errorf("get weights: %w", err)
	}
	if err := m.syncWeights(); err != nil {
		return nil, fmt.Errorf("get weights: %w", err)
	}
	var out []*tensor.Dense
	for _, w := range m.weights() {
		out = append(out, w.value.Clone().(*tensor.Dense))
	}
	return out, nil
}

// SetWeights replaces the model's weights with copies of ws, given in the
// order GetWeights returns them, like Keras' set_weights. Nothing changes
// unless every tensor has the right shape and holds finite numbers only
// (no NaN, no infinity).
func (m *Sequential) SetWeights(ws []*tensor.Dense) error {
	if m == nil {
		return fmt.Errorf("set weights: %w", ErrNilModel)
	}
	release, err := m.claim("set weights", false)
	if err != nil {
		return err
	}
	defer release()
	if err := m.ensureBuilt(); err != nil {
		return fmt.Errorf("set weights: %w", err)
	}
	own := m.weights()
	if len(ws) != len(own) {
		return fmt.Errorf("set weights: model %q has %d weight tensors but %d were given", m.name, len(own), len(ws))
	}
	for i, w := range own {
		if ws[i] == nil || !shapes.Equal(ws[i].Shape(), w.value.Shape()) || ws[i].Dtype() != tensor.Float32 {
			var got any = "nil"
			if ws[i] != nil {
				got = fmt.Sprintf("%s %v", weightShape(ws[i].Shape()), ws[i].Dtype())
			}
			return fmt.Errorf("set weights: %s has shape %s float32 in the model but the tensor given is %v", w.name, weightShape(w.value.Shape()), got)
		}
	}
	values := make([][]float32, len(own))
	for i, w := range own {
		src := ws[i]
		if !src.IsNativelyAccessible() || src.RequiresIterator() {
			src = src.Materialize().(*tensor.Dense)
		}
		values[i] = src.Data().([]float32)
		if j := firstNonFinite(values[i]); j >= 0 {
			return fmt.Errorf("set weights: the tensor given for %s holds %v at index %d: weights must be finite numbers", w.name, values[i][j], j)
		}
	}
	for i, w := range own {
		copy(w.value.Data().([]float32), values[i])
	}
	if err := m.weightsWritten(); err != nil {
		return fmt.Errorf("set weights: %w", err)
	}
	return nil
}

// SaveWeights writes the model's weights to path in the safetensors format,
// replacing any file there atomically. Each tensor is named
// "<layer>/kernel" or "<layer>/bias", a kernel has Keras' shape (inputs,
// units), so Python reads them with safetensors.numpy.load_file(path).
//
// Weights that hold a NaN or an infinity (training diverged) are not
// written: the error names the first such tensor, and any file at path is
// left as it was.
//
// Under a strategy (WithStrategy) rank 0 writes the file; on the other
// ranks SaveWeights returns nil and writes nothing, without waiting for
// rank 0.
func (m *Sequential) SaveWeights(path string) error {
	if m == nil {
		return fmt.Errorf("save weights: %w", ErrNilModel)
	}
	release, err := m.claim("save weights", false)
	if err != nil {
		return err
	}
	defer release()
	if err := m.ensureBuilt(); err != nil {
		return fmt.Errorf("save weights: %w", err)
	}
	if !m.writesFiles() {
		return nil // rank 0 writes (see distributed_files.go)
	}
	meta := map[string]string{metaKind: kindWeights, metaVersion: checkpointVersion, metaModel: m.name}
	ts, err := m.weightTensors()
	if err != nil {
		return fmt.Errorf("save weights: %w", err)
	}
	if err := m.writeTensors(path, ts, meta, nil); err != nil {
		return fmt.Errorf("save weights: %w", err)
	}
	return nil
}

// weightTensors lists the weights, up to date on the host, for writing;
// it refuses weights that are not finite.
func (m *Sequential) weightTensors() ([]safetensors.Tensor, error) {
	if err := m.syncWeights(); err != nil {
		return nil, err
	}
	var ts []safetensors.Tensor
	for _, w := range m.weights() {
		data := w.value.Data().([]float32)
		if i := firstNonFinite(data); i >= 0 {
			return nil, m.diverged("weight "+w.name, data[i], i)
		}
		ts = append(ts, safetensors.Tensor{Name: w.name, Shape: w.value.Shape().Clone(), Data: data})
	}
	return ts, nil
}

// firstNonFinite returns the index of the first NaN or infinity in v, or
// -1 when every value is a finite number.
func firstNonFinite(v []float32) int {
	for i, x := range v {
		if x-x != 0 { // NaN for NaN and ±Inf, 0 for every finite x
			return i
		}
	}
	return -1
}

// diverged is the error for saving a tensor (what) that holds a value that
// is not finite: a file of it would be refused on loading.
func (m *Sequential) diverged(what string, v float32, i int) error {
	lr := ""
	if m.compiled != nil {
		lr = fmt.Sprintf(" (now %g)", m.compiled.optimizer.LearningRate())
	}
	return fmt.Errorf("%s holds %v at index %d: training diverged, so nothing was written (the file there, if any, is unchanged); lower the learning rate%s and train again from the last good checkpoint",
		what, v, i, lr)
}

// nonFiniteLoaded is the error for a file whose tensor (what) holds a
// value that is not finite.
func nonFiniteLoaded(path, what string, v float32, i int) error {
	return fmt.Errorf("%s: %s holds %v at index %d: the file was saved from a run that diverged, or is damaged; load an earlier file, or train again with a lower learning rate",
		path, what, v, i)
}

// writeTensors writes a safetensors file atomically; wrap, when not nil,
// wraps the file's writer (tests inject failures with it).
func (m *Sequential) writeTensors(path string, ts []safetensors.Tensor, meta map[string]string, wrap func(io.Writer) io.Writer) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		if wrap != nil {
			w = wrap(w)
		}
		return safetensors.Write(w, ts, meta)
	})
}

// LoadWeights reads weights that SaveWeights (or SaveCheckpoint, whose
// optimizer state it ignores) wrote to path, matching tensors to layers by
// name. The model must be built, or declare its input shape; the file must
// hold every weight of the model, of the same shape, with finite values
// only (no NaN, no infinity), and no weight the model lacks. Nothing
// changes unless all of it checks out. The file's header is checked
// against its size before any data is read (see package safetensors).
//
// Under a strategy (WithStrategy) LoadWeights is collective: every rank
// calls it and reads the file, and the replicas compare what they read (a
// SHA-256 of it) before any changes: a rank that could not read it, or
// read other content than rank 0, makes every rank fail, naming it.
func (m *Sequential) LoadWeights(path string) error {
	if m == nil {
		return fmt.Errorf("load weights: %w", ErrNilModel)
	}
	release, err := m.claim("load weights", false)
	if err != nil {
		return err
	}
	defer release()
	if err := m.ensureBuilt(); err != nil {
		return fmt.Errorf("load weights: %w", err)
	}
	f, err := readAgreed(m.fileStrategy(), path, m.fileFits())
	if err != nil {
		return fmt.Errorf("load weights: %w", err)
	}
	src, err := m.checkWeights(f, path)
	if err != nil {
		return fmt.Errorf("load weights: %w", err)
	}
	if err := m.copyWeights(src); err != nil {
		return fmt.Errorf("load weights: %w", err)
	}
	return nil
}

// maxSlotsPerWeight is the most optimizer slots a rule keeps for one
// weight: AMSGrad's m, v and vhat; RMSprop's velocity, momentum and
// average gradient (optim.Update.SlotNames).
const maxSlotsPerWeight = 3

// fileFits is LoadWeights' and LoadCheckpoint's check of what a file
// declares, before its data is read (see fitsWeights).
func (m *Sequential) fileFits() func(map[string]string, []safetensors.Declared) error {
	sizes := map[string]int{}
	for _, w := range m.weights() {
		sizes[w.name] = w.value.Shape().TotalSize()
	}
	return fitsWeights(m.name, sizes)
}

// fitsWeights returns a check for safetensors.ReadFileChecked that
// refuses, before any data is read or allocated, a file that declares more
// than model, whose weights have these sizes by name, can hold: a tensor
// larger than its largest weight, or more values in all than its weights
// and an optimizer's slots for each of them. A valid-looking sparse file
// declaring huge tensors once exhausted memory before shapes were checked.
// What fits these bounds but is still not the model's, checkWeights
// explains once the file is read.
func fitsWeights(model string, sizes map[string]int) func(map[string]string, []safetensors.Declared) error {
	largest, total := "", 0
	for name, n := range sizes {
		if n > sizes[largest] || largest == "" {
			largest = name
		}
		total += n
	}
	return func(_ map[string]string, declared []safetensors.Declared) error {
		if len(declared) > 0 && total == 0 {
			return fmt.Errorf("the file declares %d tensors but model %q has no weights: the file is not this model's", len(declared), model)
		}
		all := 0
		for _, t := range declared {
			if t.Values > sizes[largest] {
				return fmt.Errorf("tensor %q has shape %s, %d values, more than any weight of model %q holds (the largest, %s, has %d): the file is not this model's, or it is damaged",
					t.Name, weightShape(t.Shape), t.Values, model, largest, sizes[largest])
			}
			all += t.Values
		}
		if limit := total * (1 + maxSlotsPerWeight); all > limit {
			return fmt.Errorf("the file declares %d values in %d tensors, more than model %q's %d weights and an optimizer's slots for them can hold (%d): the file is not this model's, or it is damaged",
				all, len(declared), model, total, limit)
		}
		return nil
	}
}

// checkWeights matches the file's tensors to the model's weights and
// returns them in the model's order.
func (m *Sequential) checkWeights(f *safetensors.File, path string) ([]safetensors.Tensor, error) {
	own := m.weights()
	known := map[string]bool{}
	for _, w := range own {
		known[w.name] = true
	}
	for _, name := range f.Names() {
		if !known[name] && !strings.HasPrefix(name, optimizerPrefix) {
			return nil, fmt.Errorf("%s holds tensor %q, which model %q does not have (its weights: %s): was the file saved from another model?",
				path, name, m.name, strings.Join(weightNames(own), ", "))
		}
	}
	src := make([]safetensors.Tensor, len(own))
	for i, w := range own {
		t, ok := f.Tensor(w.name)
		if !ok {
			return nil, fmt.Errorf("%s has no tensor %q, a weight of model %q (the file holds: %s)", path, w.name, m.name, strings.Join(f.Names(), ", "))
		}
		if !shapes.Equal(t.Shape, w.value.Shape()) {
			return nil, fmt.Errorf("tensor %q has shape %s in %s but shape %s in model %q", w.name, weightShape(t.Shape), path, weightShape(w.value.Shape()), m.name)
		}
		if j := firstNonFinite(t.Data); j >= 0 {
			return nil, nonFiniteLoaded(path, fmt.Sprintf("weight %s", w.name), t.Data[j], j)
		}
		src[i] = t
	}
	return src, nil
}

// copyWeights copies tensors checked by checkWeights into the model.
func (m *Sequential) copyWeights(src []safetensors.Tensor) error {
	for i, w := range m.weights() {
		copy(w.value.Data().([]float32), src[i].Data)
	}
	return m.weightsWritten()
}

func weightNames(ws []weight) []string {
	names := make([]string, len(ws))
	for i, w := range ws {
		names[i] = w.name
	}
	return names
}

// Checkpoint says where a full checkpoint stands in training.
type Checkpoint struct {
	// Epoch is the number of epochs completed: the InitialEpoch to resume at.
	Epoch int
	// Step is the number of steps done in epoch Epoch when the checkpoint
	// was taken mid-epoch (after an interruption): the InitialStep to
	// resume at. 0 at an epoch boundary.
	Step int
	// Metadata holds the caller's own entries (the seed, say), stored as
	// strings in the file's __metadata__. Keys must not begin with "gokeras.".
	Metadata map[string]string
}

// SaveCheckpoint writes everything needed to go on training exactly where
// it stands: the weights, as SaveWeights writes them, plus the optimizer's
// state — its slots as tensors "optimizer/<weight>/<slot>" (SGD's
// "momentum", Adam's "m" and "v"), its iteration count and learning rate in
// the metadata — and the position ck gives. The file is replaced
// atomically: if the write fails, the previous checkpoint is untouched.
//
// Resume with LoadCheckpoint, then Fit with InitialEpoch(ck.Epoch) and
// InitialStep(ck.Step) and the same Seed: on the CPU the result is the same,
// bit for bit, as a run that was never interrupted.
//
// A weight or optimizer slot that holds a NaN or an infinity (training
// diverged) is not written: the error names it, and the previous
// checkpoint stays as it was.
//
// Under a strategy (WithStrategy) rank 0 writes the checkpoint; on the
// other ranks SaveCheckpoint returns nil and writes nothing, without
// waiting for rank 0. Every replica holds the same weights and optimizer
// state after each step, so rank 0's checkpoint resumes the whole job:
// LoadCheckpoint on every rank, then Fit with InitialEpoch and InitialStep
// and the same Seed goes on as the uninterrupted job, bit for bit.
func (m *Sequential) SaveCheckpoint(path string, ck Checkpoint) error {
	if m == nil {
		return fmt.Errorf("save checkpoint: %w", ErrNilModel)
	}
	release, err := m.claim("save checkpoint", false)
	if err != nil {
		return err
	}
	defer release()
	if err := m.saveCheckpoint(path, ck, nil); err != nil {
		return fmt.Errorf("save checkpoint: %w", err)
	}
	return nil
}

func (m *Sequential) saveCheckpoint(path string, ck Checkpoint, wrap func(io.Writer) io.Writer) error {
	if m.compiled == nil {
		return m.notCompiled()
	}
	if err := m.ensureBuilt(); err != nil {
		return err
	}
	if ck.Epoch < 0 || ck.Step < 0 {
		return fmt.Errorf("epoch %d and step %d must not be negative", ck.Epoch, ck.Step)
	}
	opt, ok := m.compiled.optimizer.(optim.Stateful)
	if !ok {
		return fmt.Errorf("optimizer %s cannot save its state (it does not implement optim.Stateful): use SaveWeights", m.compiled.optimizer.Name())
	}
	if !m.writesFiles() {
		return nil // rank 0 writes (see distributed_files.go)
	}
	meta := map[string]string{}
	for k, v := range ck.Metadata {
		if strings.HasPrefix(k, metaPrefix) {
			return fmt.Errorf("metadata key %q: keys beginning with %q are gokeras' own", k, metaPrefix)
		}
		meta[k] = v
	}
	// The slots may live on the device: bring them (and the weights) back
	// first, so that a failed copy is an error here, not stale state.
	if err := m.syncWeights(); err != nil {
		return err
	}
	st := opt.State()
	maps.Copy(meta, map[string]string{
		metaKind: kindCheckpoint, metaVersion: checkpointVersion, metaModel: m.name,
		metaEpoch: strconv.Itoa(ck.Epoch), metaStep: strconv.Itoa(ck.Step),
		metaOptimizer:    opt.Name(),
		metaIterations:   strconv.FormatInt(st.Iterations, 10),
		metaLearningRate: strconv.FormatFloat(st.LearningRate, 'g', -1, 64),
	})
	ts, err := m.weightTensors()
	if err != nil {
		return err
	}
	for _, slot := range slices.Sorted(maps.Keys(st.Slots)) {
		for _, name := range slices.Sorted(maps.Keys(st.Slots[slot])) {
			values := st.Slots[slot][name]
			if i := firstNonFinite(values); i >= 0 {
				return m.diverged(fmt.Sprintf("optimizer slot %s of %s", slot, name), values[i], i)
			}
			shape := []int{len(values)}
			for _, w := range m.weights() {
				if w.name == name && w.value.Shape().TotalSize() == len(values) {
					shape = w.value.Shape().Clone()
				}
			}
			ts = append(ts, safetensors.Tensor{Name: optimizerPrefix + name + "/" + slot, Shape: shape, Data: values})
		}
	}
	return m.writeTensors(path, ts, meta, wrap)
}

// ReadCheckpoint reads where the checkpoint at path stands, without its
// tensors: what a program needs (the seed in Metadata, say) before it
// builds the model to LoadCheckpoint into. It reads only the header, after
// checking its length and the tensors' byte ranges against the file's
// size; a directory or a device is refused before anything is read.
func ReadCheckpoint(path string) (Checkpoint, error) {
	meta, err := safetensors.ReadMetadata(path)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("read checkpoint: %w", err)
	}
	ck, err := checkpointOf(meta, path)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("read checkpoint: %w", err)
	}
	return ck, nil
}

// checkpointOf reads the position and user metadata of a checkpoint.
func checkpointOf(meta map[string]string, path string) (Checkpoint, error) {
	switch kind := meta[metaKind]; kind {
	case kindCheckpoint:
	case kindWeights:
		return Checkpoint{}, fmt.Errorf("%s holds weights only, no optimizer state or epoch: load it with LoadWeights (or train --resume needs a file written by --checkpoint)", path)
	case kindModel:
		return Checkpoint{}, fmt.Errorf("%s is a whole model written by Save, not a checkpoint: load it with nn.LoadModel, or its weights with LoadWeights", path)
	default:
		return Checkpoint{}, fmt.Errorf("%s is a safetensors file but not a gokeras checkpoint (no %q in its metadata)", path, metaKind)
	}
	if v := meta[metaVersion]; v != checkpointVersion {
		return Checkpoint{}, fmt.Errorf("%s is a gokeras checkpoint of version %q; this gokeras reads version %s", path, v, checkpointVersion)
	}
	var ck Checkpoint
	var err error
	if ck.Epoch, err = metaInt(meta, metaEpoch, path); err != nil {
		return Checkpoint{}, err
	}
	if ck.Step, err = metaInt(meta, metaStep, path); err != nil {
		return Checkpoint{}, err
	}
	for k, v := range meta {
		if !strings.HasPrefix(k, metaPrefix) {
			if ck.Metadata == nil {
				ck.Metadata = map[string]string{}
			}
			ck.Metadata[k] = v
		}
	}
	return ck, nil
}

func metaInt(meta map[string]string, key, path string) (int, error) {
	n, err := strconv.Atoi(meta[key])
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s: metadata %s is %q, not a count: the checkpoint is damaged", path, key, meta[key])
	}
	return n, nil
}

// LoadCheckpoint restores a checkpoint SaveCheckpoint wrote: the weights
// and the optimizer's state, which must come from the same kind of
// optimizer as the one the model is compiled with. It returns where the
// checkpoint stands, for Fit's InitialEpoch and InitialStep. Nothing
// changes unless the whole file checks out, finite values included: a
// weight or optimizer slot holding a NaN or an infinity is refused by name.
//
// Under a strategy (WithStrategy) LoadCheckpoint is collective, as
// LoadWeights is: every rank reads the file, and every rank fails unless
// all of them read the same content.
func (m *Sequential) LoadCheckpoint(path string) (Checkpoint, error) {
	if m == nil {
		return Checkpoint{}, fmt.Errorf("load checkpoint: %w", ErrNilModel)
	}
	release, err := m.claim("load checkpoint", false)
	if err != nil {
		return Checkpoint{}, err
	}
	defer release()
	ck, err := m.loadCheckpoint(path)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("load checkpoint: %w", err)
	}
	return ck, nil
}

func (m *Sequential) loadCheckpoint(path string) (Checkpoint, error) {
	if m.compiled == nil {
		return Checkpoint{}, m.notCompiled()
	}
	if err := m.ensureBuilt(); err != nil {
		return Checkpoint{}, err
	}
	opt, ok := m.compiled.optimizer.(optim.Stateful)
	if !ok {
		return Checkpoint{}, fmt.Errorf("optimizer %s cannot restore its state (it does not implement optim.Stateful)", m.compiled.optimizer.Name())
	}
	f, err := readAgreed(m.fileStrategy(), path, m.fileFits())
	if err != nil {
		return Checkpoint{}, err
	}
	return m.restoreCheckpoint(opt, f, path)
}

// restoreCheckpoint restores the checkpoint f read from path into the
// model and its optimizer opt, changing nothing unless all of it checks out.
func (m *Sequential) restoreCheckpoint(opt optim.Stateful, f *safetensors.File, path string) (Checkpoint, error) {
	ck, err := checkpointOf(f.Metadata, path)
	if err != nil {
		return Checkpoint{}, err
	}
	switch saved := f.Metadata[metaOptimizer]; saved {
	case opt.Name():
	case "":
		return Checkpoint{}, fmt.Errorf("%s: metadata %s is missing, so the optimizer it holds the state of is unknown: the checkpoint is damaged", path, metaOptimizer)
	default:
		return Checkpoint{}, fmt.Errorf("%s holds the state of the %s optimizer but model %q is compiled with %s: compile with the optimizer the checkpoint was trained with", path, saved, m.name, opt.Name())
	}
	st := optim.State{Slots: map[string]map[string][]float32{}}
	if st.Iterations, err = strconv.ParseInt(f.Metadata[metaIterations], 10, 64); err != nil {
		return Checkpoint{}, fmt.Errorf("%s: metadata %s is %q, not a count: the checkpoint is damaged", path, metaIterations, f.Metadata[metaIterations])
	}
	if st.LearningRate, err = strconv.ParseFloat(f.Metadata[metaLearningRate], 64); err != nil {
		return Checkpoint{}, fmt.Errorf("%s: metadata %s is %q, not a number: the checkpoint is damaged", path, metaLearningRate, f.Metadata[metaLearningRate])
	}
	sizes := map[string]int{}
	for _, w := range m.weights() {
		sizes[w.name] = w.value.Shape().TotalSize()
	}
	for _, t := range f.Tensors {
		rest, ok := strings.CutPrefix(t.Name, optimizerPrefix)
		if !ok {
			continue
		}
		i := strings.LastIndexByte(rest, '/')
		if i < 0 {
			return Checkpoint{}, fmt.Errorf("%s: optimizer tensor %q is not named optimizer/<weight>/<slot>", path, t.Name)
		}
		name, slot := rest[:i], rest[i+1:]
		size, ok := sizes[name]
		if !ok {
			return Checkpoint{}, fmt.Errorf("%s holds optimizer state %q for weight %q, which model %q does not have", path, t.Name, name, m.name)
		}
		if len(t.Data) != size {
			return Checkpoint{}, fmt.Errorf("optimizer state %q has %d values in %s but weight %q has %d in model %q", t.Name, len(t.Data), path, name, size, m.name)
		}
		if j := firstNonFinite(t.Data); j >= 0 {
			return Checkpoint{}, nonFiniteLoaded(path, fmt.Sprintf("optimizer slot %s of %s", slot, name), t.Data[j], j)
		}
		if st.Slots[slot] == nil {
			st.Slots[slot] = map[string][]float32{}
		}
		st.Slots[slot][name] = t.Data
	}
	// After a step, an optimizer with slots has them for every trainable
	// weight: a slot missing is a damaged file, and restoring it as zeros
	// would train on silently from another state.
	if st.Iterations > 0 {
		for _, slot := range optim.SlotNames(opt) {
			for _, w := range m.weights() {
				if _, ok := st.Slots[slot][w.name]; w.trainable && !ok {
					return Checkpoint{}, fmt.Errorf("%s: optimizer slot %s of %s is missing, though %s took %d steps: the checkpoint is damaged",
						path, slot, w.name, opt.Name(), st.Iterations)
				}
			}
		}
	}
	// Check the weights, then restore the optimizer (SetState changes
	// nothing when it fails), and only then copy the weights in.
	src, err := m.checkWeights(f, path)
	if err != nil {
		return Checkpoint{}, err
	}
	if err := opt.SetState(st); err != nil {
		return Checkpoint{}, fmt.Errorf("%s: %w", path, err)
	}
	if err := m.copyWeights(src); err != nil {
		return Checkpoint{}, fmt.Errorf("%s: %w", path, err)
	}
	return ck, nil
}
