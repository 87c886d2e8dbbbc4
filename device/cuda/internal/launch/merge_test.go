package launch

import (
	"slices"
	"testing"

	"github.com/gokeras/gokeras/ops"
)

func TestBroadcastArgs(t *testing.T) {
	l := ops.BinaryParams{A: []int{2, 1, 4}, B: []int{2, 3, 1}}.Layout()
	args, err := BroadcastArgs(l)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{3, 2, 3, 4, 1, 1, 1, 4, 0, 1, 0, 0, 0, 3, 1, 0, 0, 0, 0}
	if !slices.Equal(args, want) {
		t.Errorf("BroadcastArgs(%+v) = %v, want %v", l, args, want)
	}
	if _, err := BroadcastArgs(ops.BroadcastLayout{Dims: make([]int, 7), StrideA: make([]int, 7), StrideB: make([]int, 7)}); err == nil {
		t.Error("seven axes were accepted")
	}
	if _, err := BroadcastArgs(ops.BroadcastLayout{Dims: []int{1 << 16, 1 << 16}, StrideA: []int{1, 0}, StrideB: []int{1, 0}}); err == nil {
		t.Error("2³² values were accepted")
	}
}
