package termtest

import (
	"fmt"
	"io"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// Open opens a pseudo-terminal of cols columns and rows rows, or skips
// the test where the system has none to give. The terminal is closed when
// the test ends.
func Open(t testing.TB, cols, rows int) *Terminal {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	tty, err := openTTY(master, cols, rows)
	if err != nil {
		_ = master.Close()
		t.Skipf("no pseudo-terminal: %v", err)
	}
	term := &Terminal{TTY: tty, master: master, done: make(chan struct{})}
	go func() {
		defer close(term.done)
		_, _ = io.Copy(term, master) // ends with EIO once TTY is closed and drained
	}()
	t.Cleanup(func() {
		_ = tty.Close()
		<-term.done
		_ = master.Close()
	})
	return term
}

// openTTY unlocks the terminal end of master, opens it, sizes it and
// turns its output processing off.
func openTTY(master *os.File, cols, rows int) (*os.File, error) {
	mfd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(mfd, unix.TIOCSPTLCK, 0); err != nil {
		return nil, fmt.Errorf("unlocking: %w", err)
	}
	n, err := unix.IoctlGetInt(mfd, unix.TIOCGPTN)
	if err != nil {
		return nil, fmt.Errorf("numbering: %w", err)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	fd := int(tty.Fd())
	if err := unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: uint16(rows)}); err != nil {
		_ = tty.Close()
		return nil, fmt.Errorf("sizing: %w", err)
	}
	tio, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		_ = tty.Close()
		return nil, fmt.Errorf("reading its settings: %w", err)
	}
	tio.Oflag &^= unix.OPOST
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, tio); err != nil {
		_ = tty.Close()
		return nil, fmt.Errorf("turning output processing off: %w", err)
	}
	return tty, nil
}
