// Package shapes formats and compares per-sample shapes the way Keras
// prints them, for error messages and summaries across gokeras.
package shapes

import (
	"fmt"
	"strings"
)

// String writes a per-sample shape with Keras' batch axis: (None, 32, 32, 3),
// and (None,) for a scalar sample, as Python prints a 1-tuple.
func String(shape []int) string {
	var b strings.Builder
	b.WriteString("(None")
	for _, d := range shape {
		fmt.Fprintf(&b, ", %d", d)
	}
	if len(shape) == 0 {
		b.WriteByte(',')
	}
	b.WriteByte(')')
	return b.String()
}

// Equal reports whether two shapes have the same dimensions.
func Equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Size is the number of values in a shape: the product of its dimensions,
// 1 for the scalar shape ().
func Size(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}
