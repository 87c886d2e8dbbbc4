package layers

import (
	"slices"
	"strings"
	"testing"
)

// The merge layers' shape rules and Keras' errors.
func TestMergeShapes(t *testing.T) {
	tests := []struct {
		name    string
		l       *MergeLayer
		in      [][]int
		want    []int
		wantErr string
	}{
		{"add", Add(), [][]int{{4, 4, 8}, {4, 4, 8}}, []int{4, 4, 8}, ""},
		{"add of three", Add(), [][]int{{3}, {3}, {3}}, []int{3}, ""},
		{"broadcast a 1", Multiply(), [][]int{{4, 1}, {4, 8}}, []int{4, 8}, ""},
		{"broadcast both ways", Maximum(), [][]int{{4, 1}, {1, 8}}, []int{4, 8}, ""},
		{"incompatible", Add(Named("a")), [][]int{{4, 5}, {4, 6}}, nil, `Add layer "a": inputs have incompatible shapes: got inputs of shapes [(None, 4, 5), (None, 4, 6)]`},
		{"ranks differ", Average(), [][]int{{4}, {4, 1}}, nil, "different ranks"},
		{"one input", Add(), [][]int{{4}}, nil, "should be called on a list of at least 2 inputs"},
		{"subtract of three", Subtract(), [][]int{{4}, {4}, {4}}, nil, "exactly 2 inputs"},
		{"concatenate last", Concatenate(-1), [][]int{{4, 4, 3}, {4, 4, 5}}, []int{4, 4, 8}, ""},
		{"concatenate axis 1", Concatenate(1), [][]int{{2, 3}, {5, 3}, {1, 3}}, []int{8, 3}, ""},
		{"concatenate mismatch", Concatenate(-1, Named("c")), [][]int{{4, 3}, {5, 3}}, nil, "requires inputs with matching shapes except for the concatenation axis -1"},
		{"concatenate batch axis", Concatenate(0), [][]int{{4}, {4}}, nil, "the batch axis 0 cannot be joined"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.l.PlanInputs(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("PlanInputs = %v, %v; want an error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("PlanInputs = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
	if _, err := Add().Build([]int{3}, nil); err == nil || !strings.Contains(err.Error(), "should be called on a list of inputs") {
		t.Errorf("Build of one input = %v", err)
	}
}

// Merge layers round-trip through their Keras configs.
func TestMergeConfigs(t *testing.T) {
	for _, l := range []*MergeLayer{Add(Named("a")), Subtract(), Multiply(), Average(), Maximum(), Minimum(), Concatenate(2, Named("c"))} {
		c, err := l.Config()
		if err != nil {
			t.Fatal(err)
		}
		back, err := FromConfig(c)
		if err != nil {
			t.Fatalf("%s: %v", l.Type(), err)
		}
		m, ok := back.(*MergeLayer)
		if !ok || m.Type() != l.Type() || m.Name() != l.Name() || m.Axis() != l.Axis() {
			t.Errorf("%s round-tripped to %#v", l.Type(), back)
		}
	}
}
