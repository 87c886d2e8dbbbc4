// Package term tells whether output goes to a terminal, where progress
// bars may redraw themselves; elsewhere (CI, pipes, log files) gokeras
// writes plain lines.
package term

import (
	"io"
	"os"
)

// IsTerminal reports whether w is a character device such as a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
