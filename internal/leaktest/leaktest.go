// Package leaktest checks that a test leaves no goroutine running: take
// runtime.NumGoroutine() before the code under test, and Check after it.
// It imports nothing of the module, so any package's tests may use it.
package leaktest

import (
	"runtime"
	"testing"
	"time"
)

// Check fails the test, listing every goroutine's stack, when within a
// second the goroutines running are not back to before (those ending on
// their own, after a Close returns, get that long).
func Check(t testing.TB, before int) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines running, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond)
	}
}
