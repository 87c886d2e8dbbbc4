package nn

import (
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/gokeras/gokeras/safetensors"
)

// SaveWeights writes the model's weights to path in the safetensors format,
// replacing any file there atomically. Each tensor is named
// "<layer>/kernel" or "<layer>/bias", a kernel has Keras' shape (inputs,
// units), so Python reads them with safetensors.numpy.load_file(path).
//
// A path ending in ".weights.h5" gets Keras 3's weights file instead (what
// model.save_weights writes there, and Keras 3's load_weights reads: each
// layer's variables under layers/<class name>[_n]/vars/<i>), and any other
// ".h5" (or ".hdf5") Keras 2's (layer_names and weight_names, as
// tf.keras 2's save_weights writes it). LoadWeights reads both, and the
// files Keras writes.
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
	if layout, ok := isKerasWeightsPath(path); ok {
		if err := m.saveKerasWeights(path, layout); err != nil {
			return fmt.Errorf("save weights: %w", err)
		}
		return nil
	}
	ts, meta, err := m.weightsFile()
	if err != nil {
		return fmt.Errorf("save weights: %w", err)
	}
	if err := m.writeTensors(path, ts, meta, nil); err != nil {
		return fmt.Errorf("save weights: %w", err)
	}
	return nil
}

// weightsFile is what a weights file holds: the weights, and the metadata
// that says what the file is.
func (m *Sequential) weightsFile() ([]safetensors.Tensor, map[string]string, error) {
	ts, err := m.weightTensors()
	return ts, map[string]string{metaKind: kindWeights, metaVersion: checkpointVersion, metaModel: m.name}, err
}

// SaveWeightsTo writes what SaveWeights writes to w, for a file kept
// elsewhere than on disk (sent over a network, embedded in a program).
// Unlike SaveWeights it cannot be atomic: on an error, w may hold part of
// the file. It writes on every rank of a strategy.
func (m *Sequential) SaveWeightsTo(w io.Writer) error {
	if m == nil {
		return fmt.Errorf("save weights: %w", ErrNilModel)
	}
	if w == nil {
		return errors.New("save weights: no writer given")
	}
	release, err := m.claim("save weights", false)
	if err != nil {
		return err
	}
	defer release()
	if err := m.ensureBuilt(); err != nil {
		return fmt.Errorf("save weights: %w", err)
	}
	ts, meta, err := m.weightsFile()
	if err != nil {
		return fmt.Errorf("save weights: %w", err)
	}
	if err := safetensors.Write(w, ts, meta); err != nil {
		return fmt.Errorf("save weights: %w", err)
	}
	return nil
}

// weightTensors lists the weights, up to date on the host, for writing;
// it refuses weights that are not finite. Every file gokeras writes holds
// them.
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

// LoadWeights reads weights that SaveWeights (or SaveCheckpoint, whose
// optimizer state it ignores) wrote to path, matching tensors to layers by
// name; or a Keras HDF5 weights file (told by its content, not its name):
// Keras 3's .weights.h5 (its variables matched by class and position, as
// Keras 3 does), Keras 2's .h5 weights or whole-model file (its weights
// matched layer by layer in order, as Keras 2's load_weights does; the
// rest of a whole-model file is not read), or the weights of a Keras 3
// .keras archive (its model.weights.h5; its config.json is not read). The model must be built, or declare its input shape; the file must
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
	return m.loadWeightsClaimed(pathSource(path))
}

// LoadWeightsFrom is LoadWeights of the file r reads (all of it, into
// memory): a file received over a network, say.
func (m *Sequential) LoadWeightsFrom(r io.Reader) error {
	return m.loadWeightsClaimed(readerSource(r, "the weights read"))
}

// LoadWeightsFS is LoadWeights of the file name in fsys, such as weights
// embedded in the program with go:embed:
//
//	//go:embed weights.safetensors
//	var files embed.FS
//	err := model.LoadWeightsFS(files, "weights.safetensors")
func (m *Sequential) LoadWeightsFS(fsys fs.FS, name string) error {
	return m.loadWeightsClaimed(fsSource(fsys, name))
}

// loadWeightsClaimed is LoadWeights of src: it claims the model, builds
// it if need be, and loads.
func (m *Sequential) loadWeightsClaimed(src fileSource) error {
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
	return m.loadWeights(src)
}

// loadWeights reads the weights of src into the model, claimed and built.
func (m *Sequential) loadWeights(src fileSource) error {
	plan := m.builtPlan()
	f, err := readAgreed(m.fileStrategy(), src, plan.fits)
	if err != nil {
		return fmt.Errorf("load weights: %w", err)
	}
	if f.Metadata[metaKind] == kindKeras {
		if f.Tensors, err = m.kerasTensors(f, src.name); err != nil {
			return fmt.Errorf("load weights: %w", err)
		}
	}
	weights, err := plan.check(f, src.name)
	if err != nil {
		return fmt.Errorf("load weights: %w", err)
	}
	if err := m.copyWeights(weights); err != nil {
		return fmt.Errorf("load weights: %w", err)
	}
	return nil
}
