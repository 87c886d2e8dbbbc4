//go:build (linux || darwin || freebsd) && (amd64 || arm64)

package dynlib

import (
	"strings"
	"sync"
	"testing"

	"github.com/ebitengine/purego"
)

// The error of a library that is not there names it, every time, while
// other goroutines open libraries too (so the scheduler moves goroutines
// between threads): without the locked thread, dlerror was now and then
// read on another thread and the message came back empty.
func TestOpenErrorNamesTheLibraryEveryTime(t *testing.T) {
	const name = "libgokeras-no-such-library.so.7"
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for range 8 {
		wg.Go(func() {
			for range 500 {
				_, err := Open(name, purego.RTLD_NOW|purego.RTLD_LOCAL)
				if err == nil || !strings.Contains(err.Error(), name) {
					errs <- "error " + errString(err) + " does not name the library"
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return "\"" + err.Error() + "\""
}
