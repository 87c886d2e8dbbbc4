package nn

import (
	"fmt"
	"io"
	"maps"
	"strconv"
	"strings"

	"github.com/gokeras/gokeras/optim"
	"github.com/gokeras/gokeras/safetensors"
)

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

// checkpointMeta writes where ck stands, and its user metadata, into meta.
func checkpointMeta(ck Checkpoint, meta map[string]string) error {
	if ck.Epoch < 0 || ck.Step < 0 {
		return fmt.Errorf("epoch %d and step %d must not be negative", ck.Epoch, ck.Step)
	}
	for k, v := range ck.Metadata {
		if strings.HasPrefix(k, metaPrefix) {
			return fmt.Errorf("metadata key %q: keys beginning with %q are gokeras' own", k, metaPrefix)
		}
		meta[k] = v
	}
	meta[metaEpoch], meta[metaStep] = strconv.Itoa(ck.Epoch), strconv.Itoa(ck.Step)
	return nil
}

func (m *Sequential) saveCheckpoint(path string, ck Checkpoint, wrap func(io.Writer) io.Writer) error {
	if m.compiled == nil {
		return m.notCompiled()
	}
	if err := m.ensureBuilt(); err != nil {
		return err
	}
	meta := map[string]string{}
	if err := checkpointMeta(ck, meta); err != nil {
		return err
	}
	opt, ok := m.compiled.optimizer.(optim.Stateful)
	if !ok {
		return fmt.Errorf("optimizer %s cannot save its state (it does not implement optim.Stateful): use SaveWeights", m.compiled.optimizer.Name())
	}
	if !m.writesFiles() {
		return nil // rank 0 writes (see distributed_files.go)
	}
	maps.Copy(meta, map[string]string{metaKind: kindCheckpoint, metaVersion: checkpointVersion, metaModel: m.name})
	ts, err := m.weightTensors()
	if err != nil {
		return err
	}
	state, err := m.optimizerTensors(opt, meta)
	if err != nil {
		return err
	}
	ts = append(ts, state...)
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
		if v := meta[metaVersion]; v != checkpointVersion {
			return Checkpoint{}, fmt.Errorf("%s is a gokeras checkpoint of version %q; this gokeras reads version %s", path, v, checkpointVersion)
		}
	case kindWeights, kindKeras:
		return Checkpoint{}, fmt.Errorf("%s holds weights only, no optimizer state or epoch: load it with LoadWeights (or train --resume needs a file written by --checkpoint)", path)
	case kindModel:
		// A whole model is a checkpoint too when Save recorded where
		// training stood (AtCheckpoint: ModelCheckpoint's files).
		if _, ok := meta[metaEpoch]; !ok {
			return Checkpoint{}, fmt.Errorf("%s is a whole model written by Save, not a checkpoint (it says nowhere where training stood): load it with nn.LoadModel, or its weights with LoadWeights", path)
		}
		if meta[metaOptimizer] == "" {
			return Checkpoint{}, fmt.Errorf("%s is a whole model without its optimizer's state: load it with nn.LoadModel, or its weights with LoadWeights", path)
		}
	default:
		return Checkpoint{}, fmt.Errorf("%s is a safetensors file but not a gokeras checkpoint (no %q in its metadata)", path, metaKind)
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
	f, err := readAgreed(m.fileStrategy(), pathSource(path), m.builtPlan().fits)
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
	st, err := m.readOptimizerState(f, opt, checkpointFile(path, m))
	if err != nil {
		return Checkpoint{}, err
	}
	// Check the weights, then restore the optimizer (SetState changes
	// nothing when it fails), and only then copy the weights in.
	src, err := m.builtPlan().check(f, path)
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
