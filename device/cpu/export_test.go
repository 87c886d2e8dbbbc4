package cpu

import "io"

// SetFallbackWarnings sends the tape-machine fallback's warning to w until
// the returned function restores the default.
func SetFallbackWarnings(w io.Writer) (restore func()) {
	old := fallbackWarnings
	fallbackWarnings = w
	return func() { fallbackWarnings = old }
}
