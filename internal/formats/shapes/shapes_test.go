package shapes

import "testing"

func TestString(t *testing.T) {
	for _, tc := range []struct {
		shape []int
		want  string
	}{{nil, "(None,)"}, {[]int{10}, "(None, 10)"}, {[]int{32, 32, 3}, "(None, 32, 32, 3)"}} {
		if got := String(tc.shape); got != tc.want {
			t.Errorf("String(%v) = %q, want %q", tc.shape, got, tc.want)
		}
	}
	if !Equal([]int{1, 2}, []int{1, 2}) || Equal([]int{1}, []int{1, 2}) || Equal([]int{1, 2}, []int{2, 1}) {
		t.Error("Equal is wrong")
	}
}
