// Package termtest opens pseudo-terminals for tests of code that behaves
// differently on a terminal: a live progress bar, say.
package termtest

import (
	"bytes"
	"os"
	"sync"
)

// Terminal is a pseudo-terminal. Code under test writes to TTY, which is a
// real terminal to it; Output returns what reached the screen, byte for
// byte (the line discipline's output processing is off, so "\n" is not
// turned into "\r\n").
type Terminal struct {
	// TTY is the terminal end, the one a program's output goes to.
	TTY *os.File

	master *os.File
	done   chan struct{}
	mu     sync.Mutex
	out    bytes.Buffer
}

// Write appends what the terminal received; the reader goroutine calls it.
func (t *Terminal) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.out.Write(b)
}

// Output closes TTY and returns everything written to it.
func (t *Terminal) Output() string {
	_ = t.TTY.Close()
	<-t.done
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.out.String()
}
