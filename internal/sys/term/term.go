// Package term tells whether output goes to a terminal, where progress
// bars may redraw themselves, and how wide that terminal is; elsewhere (CI,
// pipes, log files, /dev/null) gokeras writes plain lines.
package term

import (
	"io"
	"os"

	"golang.org/x/term"
)

// IsTerminal reports whether w is a terminal: an *os.File open on a tty.
// Other character devices, such as /dev/null, are not terminals.
func IsTerminal(w io.Writer) bool {
	tty := false
	withFD(w, func(fd int) { tty = term.IsTerminal(fd) })
	return tty
}

// Width reports the width in columns of the terminal w writes to; ok is
// false when w is not a terminal or its size is unknown.
func Width(w io.Writer) (cols int, ok bool) {
	withFD(w, func(fd int) {
		width, _, err := term.GetSize(fd)
		cols, ok = width, err == nil && width > 0
	})
	if !ok {
		return 0, false
	}
	return cols, true
}

// withFD calls f with w's file descriptor when w is an open *os.File.
// It borrows the descriptor through SyscallConn rather than Fd, which
// would switch the file to blocking mode.
func withFD(w io.Writer, f func(fd int)) {
	file, ok := w.(*os.File)
	if !ok || file == nil {
		return
	}
	conn, err := file.SyscallConn()
	if err != nil {
		return
	}
	_ = conn.Control(func(fd uintptr) { f(int(fd)) }) // an error means f did not run
}
