package nn

import (
	"fmt"
	"io"
	"io/fs"

	"github.com/gokeras/gokeras/internal/sys/atomicfile"
	"github.com/gokeras/gokeras/safetensors"
)

// Saving lives in the save_*.go files. Every file gokeras writes is a
// safetensors file whose tensors are the model's weights, named
// "<layer>/<weight>", and whose metadata says what kind of file it is:
//
//	save_file.go        the metadata keys, the atomic write, and the errors
//	                    for values that are not finite
//	save_check.go       the one check of a file's tensors against a model
//	                    (weightPlan): before the data is read, then once read
//	save_optimizer.go   the one writer and the one reader of an optimizer's
//	                    state, which checkpoints and model files share
//	save_weights.go     SaveWeights and LoadWeights: the weights alone
//	save_checkpoint.go  SaveCheckpoint, ReadCheckpoint, LoadCheckpoint: the
//	                    weights, the optimizer's state and where training is
//	save_model.go       Save, LoadModel, ReadModelConfig: the weights, the
//	                    model's config and, if asked, the optimizer's state
//	save_functional.go  a functional model's config (Keras 3's functional
//	                    format): written from its graph, and its graph
//	                    made again from it
//
// Keras' own files are HDF5 and zip, not safetensors:
//
//	save_keras.go         Keras' weights files (.weights.h5, .h5), both ways,
//	                      and the reading of Keras archives
//	save_keras_model.go   Keras 3's .keras archive, written (Save, SaveKeras)
//	save_keras2_model.go  Keras 2's .h5 model file, written (Save, SaveKerasH5)
//	load_keras*.go        Keras model configs and compile settings, read

// Metadata keys gokeras writes into the "__metadata__" of its files.
const (
	metaPrefix        = "gokeras."
	metaKind          = metaPrefix + "kind" // kindWeights, kindCheckpoint or kindModel
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

// fileSource is a file to read: at a path, in an fs.FS (an embed.FS), or
// from a reader; name names it in errors.
type fileSource struct {
	name string
	read func(check func(map[string]string, []safetensors.Declared) error) (*safetensors.File, error)
}

// pathSource is the file at path.
func pathSource(path string) fileSource {
	return fileSource{name: path, read: func(check func(map[string]string, []safetensors.Declared) error) (*safetensors.File, error) {
		if f, ok, err := openKerasPath(path, check); ok {
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			return f, nil
		}
		return safetensors.ReadFileChecked(path, check)
	}}
}

// readerSource is the file r reads, all of it.
func readerSource(r io.Reader, name string) fileSource {
	return fileSource{name: name, read: func(check func(map[string]string, []safetensors.Declared) error) (*safetensors.File, error) {
		if r == nil {
			return nil, fmt.Errorf("%s: no reader given", name)
		}
		kind, r, err := sniffKeras(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if kind != notKeras {
			f, err := readKerasReader(kind, r, -1, check)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			return f, nil
		}
		f, err := safetensors.ReadChecked(r, -1, check)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return f, nil
	}}
}

// fsSource is the file name in fsys; its size bounds what is read.
func fsSource(fsys fs.FS, name string) fileSource {
	return fileSource{name: name, read: func(check func(map[string]string, []safetensors.Declared) error) (*safetensors.File, error) {
		if fsys == nil {
			return nil, fmt.Errorf("%s: no file system given", name)
		}
		f, err := fsys.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		info, err := f.Stat()
		if err != nil {
			return nil, err
		}
		if !info.Mode().IsRegular() {
			return nil, fmt.Errorf("%s is not a regular file (mode %v)", name, info.Mode())
		}
		kind, r, err := sniffKeras(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if kind != notKeras {
			if ra, ok := f.(io.ReaderAt); ok {
				r = io.NewSectionReader(ra, 0, info.Size())
			}
			file, err := readKerasReader(kind, r, info.Size(), check)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			return file, nil
		}
		file, err := safetensors.ReadChecked(r, info.Size(), check)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return file, nil
	}}
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
