package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/gokeras/gokeras/callbacks"
	"github.com/gokeras/gokeras/nn"
)

// checkTensorBoard checks, before any work, that train can write the
// --tensorboard event files, as checkOutputs checks the files the other
// flags name, and that none of those files is the directory or one of the
// two it makes in it (train/ and validation/): a bad directory, or a clash
// found only after training, would lose the logs or the weights.
func checkTensorBoard(dir string, files []output) error {
	if dir == "" {
		return nil
	}
	if err := callbacks.NewTensorBoard(dir).Check(); err != nil {
		return fmt.Errorf("--tensorboard %w", err)
	}
	for _, f := range files {
		if f.path == "" {
			continue
		}
		for _, d := range []string{dir, filepath.Join(dir, "train"), filepath.Join(dir, "validation")} {
			if sameFile(f.path, d) {
				return fmt.Errorf("--%s %s is where --tensorboard %s writes its logs (the directory %s): give --%s a file outside it, or --tensorboard another directory",
					f.flag, f.path, dir, d, f.flag)
			}
		}
	}
	return nil
}

// tensorBoard makes the --tensorboard callback, with Keras' defaults: each
// epoch's figures and the learning rate, in dir/train and dir/validation.
// The option also says on out, when training ends, where the logs are.
// The end of training closes the files; close them too after a Fit that
// failed, so that what it wrote is kept (Close).
func tensorBoard(dir string, out io.Writer) (*callbacks.TensorBoard, nn.Option) {
	tb := callbacks.NewTensorBoard(dir)
	return tb, nn.Callbacks(tb, &tensorBoardNote{dir: dir, out: out})
}

// tensorBoardNote says where the --tensorboard logs are and how to view them.
type tensorBoardNote struct {
	nn.CallbackBase
	dir string
	out io.Writer
}

func (n *tensorBoardNote) OnTrainEnd(nn.Logs) error {
	fmt.Fprintf(n.out, "TensorBoard logs written to %s (view them with: tensorboard --logdir %s)\n", n.dir, shellQuote(n.dir))
	return nil
}
