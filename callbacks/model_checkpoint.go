package callbacks

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/gokeras/gokeras/internal/formats/pyformat"
	"github.com/gokeras/gokeras/nn"
)

// ModelCheckpoint saves the model at the end of each epoch, like
// keras.callbacks.ModelCheckpoint. Make one with NewModelCheckpoint, which
// sets Keras' defaults, then change its fields.
//
// Filepath is formatted as Keras formats it, with Python's str.format and
// the epoch (1-based) and the epoch's figures: "ckpt-{epoch:02d}-{val_loss:.2f}.safetensors".
// Files are safetensors, replaced atomically, but for a Filepath ending in
// .keras. A full save (SaveWeightsOnly false, Keras' default) is the
// whole model, as Keras' model.save: what nn.LoadModel loads, the
// optimizer's state with it, and the epoch (nn.AtCheckpoint), so that
// nn.Model.LoadCheckpoint also resumes from it exactly; every layer, the
// loss, the metrics and the optimizer must then have a config (those of
// gokeras do). A full save to a .keras name is Keras 3's archive instead
// (nn.Model.SaveKeras), to a .h5 or .hdf5 name Keras 2's model file
// (nn.Model.SaveKerasH5), which Keras and nn.LoadModel load, without the
// epoch (and, but for SGD's and Adam's in a .keras archive, without the
// optimizer's state). SaveWeightsOnly writes what nn.Model.SaveWeights writes. Keras' save_freq in batches is not
// supported: a ModelCheckpoint saves once per epoch.
type ModelCheckpoint struct {
	nn.CallbackBase
	// Filepath is where to save, a template formatted as above.
	Filepath string
	// Monitor is the figure SaveBestOnly watches (default "val_loss").
	Monitor string
	// Verbose 1 prints Keras' message on each save (default 0).
	Verbose int
	// SaveBestOnly saves only when Monitor improves on the best value so far (default false).
	SaveBestOnly bool
	// SaveWeightsOnly saves the weights alone instead of a full checkpoint (default false).
	SaveWeightsOnly bool
	// Mode is "min", "max" or "auto" (default): max for figures whose name
	// ends in "acc", "accuracy" or "auc", min otherwise.
	Mode string
	// InitialValueThreshold, when not NaN (the default), is the best value
	// a first save must beat with SaveBestOnly.
	InitialValueThreshold float64
	// Metadata is stored in full checkpoints (the seed of the run, say).
	Metadata map[string]string

	mon  monitor
	best float64
}

// NewModelCheckpoint makes a ModelCheckpoint with Keras' defaults that
// saves to filepath.
func NewModelCheckpoint(filepath string) *ModelCheckpoint {
	return &ModelCheckpoint{Filepath: filepath, Monitor: "val_loss", Mode: "auto", InitialValueThreshold: math.NaN()}
}

// OnTrainBegin checks the settings and starts afresh.
func (mc *ModelCheckpoint) OnTrainBegin(nn.Logs) error {
	if mc.Filepath == "" {
		return errors.New("ModelCheckpoint: no filepath given: set Filepath, e.g. \"ckpt-{epoch:02d}.safetensors\"")
	}
	var err error
	if mc.mon, err = newMonitor(mc.Monitor, "val_loss", mc.Mode, 0); err != nil {
		return fmt.Errorf("ModelCheckpoint: %w", err)
	}
	mc.Monitor = mc.mon.name
	mc.best = mc.mon.worst()
	if !math.IsNaN(mc.InitialValueThreshold) {
		mc.best = mc.InitialValueThreshold
	}
	if !mc.SaveWeightsOnly {
		if err := nn.CheckModelPath(mc.Filepath); err != nil {
			return fmt.Errorf("ModelCheckpoint: %w (or set SaveWeightsOnly: weights go to Keras' HDF5 files)", err)
		}
	}
	if !mc.SaveWeightsOnly && mc.Model != nil {
		// A whole model needs a config of every layer, the loss, the
		// metrics and the optimizer: find out now, not after an epoch.
		check := func() error { return mc.Model.SaveTo(io.Discard, nn.IncludeOptimizer(false)) }
		switch mc.kerasFormat() {
		case ".keras":
			check = func() error { return mc.Model.SaveKeras(io.Discard) }
		case ".h5":
			check = func() error { return mc.Model.SaveKerasH5(io.Discard) }
		}
		if err := check(); err != nil {
			return fmt.Errorf("ModelCheckpoint: the model cannot be saved whole to %s (%w): set SaveWeightsOnly, or use what has a config", mc.Filepath, err)
		}
	}
	return nil
}

// OnEpochEnd saves the model, or with SaveBestOnly only when Monitor
// improved.
func (mc *ModelCheckpoint) OnEpochEnd(epoch int, logs nn.Logs) error {
	values := map[string]any{"epoch": epoch + 1}
	for k, v := range logs {
		values[k] = v
	}
	path, err := pyformat.Format(mc.Filepath, values)
	if err != nil {
		return fmt.Errorf("ModelCheckpoint: failed to format the filepath: %w", err)
	}
	if mc.SaveBestOnly {
		current, ok := logs[mc.mon.name]
		if !ok {
			printf(&mc.CallbackBase, "WARNING: Can save best model only with %s available, skipping.\n", mc.mon.name)
			return nil
		}
		if !mc.mon.improves(current, mc.best) {
			if mc.Verbose > 0 {
				printf(&mc.CallbackBase, "\nEpoch %d: %s did not improve from %s\n", epoch+1, mc.mon.name, pyFixed5(mc.best))
			}
			return nil
		}
		if mc.Verbose > 0 {
			printf(&mc.CallbackBase, "\nEpoch %d: %s improved from %s to %s, saving model to %s\n",
				epoch+1, mc.mon.name, pyFixed5(mc.best), pyFixed5(current), path)
		}
		mc.best = current
	} else if mc.Verbose > 0 {
		printf(&mc.CallbackBase, "\nEpoch %d: saving model to %s\n", epoch+1, path)
	}
	switch {
	case mc.SaveWeightsOnly:
		err = mc.Model.SaveWeights(path)
	case mc.kerasFormat() != "":
		// Keras' own file, as Keras' ModelCheckpoint writes it: the
		// model, without where training stands.
		err = mc.Model.Save(path)
	default:
		err = mc.Model.Save(path, nn.AtCheckpoint(nn.Checkpoint{Epoch: epoch + 1, Metadata: mc.Metadata}))
	}
	if err != nil {
		return fmt.Errorf("ModelCheckpoint: %w", err)
	}
	return nil
}

// kerasFormat is the Keras model file Filepath names: ".keras" for Keras
// 3's archive, ".h5" for Keras 2's HDF5 model file (.h5 or .hdf5), ""
// for neither.
func (mc *ModelCheckpoint) kerasFormat() string {
	switch p := strings.ToLower(mc.Filepath); {
	case strings.HasSuffix(p, ".keras"):
		return ".keras"
	case strings.HasSuffix(p, ".weights.h5"):
		return ""
	case strings.HasSuffix(p, ".h5"), strings.HasSuffix(p, ".hdf5"):
		return ".h5"
	}
	return ""
}

// pyFixed5 is Python's f"{x:.5f}", which writes infinities as "inf".
func pyFixed5(x float64) string {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return pyformat.Repr(x)
	}
	return strconv.FormatFloat(x, 'f', 5, 64)
}
