package layers

import (
	"slices"
	"testing"
)

// TestEveryLayerClassMapsToONNX fails when the package gains a layer
// class without an ONNX method (ONNXInputs for a layer of several inputs,
// a merge layer): configCases hold one layer of each.
func TestEveryLayerClassMapsToONNX(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range configCases() {
		seen[c.layer.Type()] = true
		if _, multi := c.layer.(MultiInputLayer); multi {
			if _, ok := c.layer.(ONNXInputsMapper); !ok {
				t.Errorf("layer class %s, of several inputs, has no ONNXInputs method: map it with onnxMerge or onnxConcat (onnx.go)", c.layer.Type())
			}
			continue
		}
		if _, ok := c.layer.(ONNXMapper); !ok {
			t.Errorf("layer class %s has no ONNX method", c.layer.Type())
		}
	}
	for _, c := range classNames() {
		if !seen[c] {
			t.Errorf("configCases have no %s layer: add one", c)
		}
	}
}

// TestONNXPads checks the explicit pads against TensorFlow's "same" rule:
// out = ceil(in/stride), the total padding split with the odd one at the
// end.
func TestONNXPads(t *testing.T) {
	cases := []struct {
		name                      string
		in, kernel, strides, dila []int
		same                      bool
		want                      []int64
	}{
		{"3×3 same", []int{32, 32, 3}, []int{3, 3}, []int{1, 1}, []int{1, 1}, true, []int64{1, 1, 1, 1}},
		{"even kernel: the extra pad at the end", []int{15, 14, 3}, []int{4, 2}, []int{1, 1}, []int{1, 1}, true, []int64{1, 0, 2, 1}},
		{"strides 2 on an odd and an even size", []int{15, 14, 3}, []int{3, 3}, []int{2, 2}, []int{1, 1}, true, []int64{1, 0, 1, 1}},
		{"pool 2 strides 2 on 7", []int{7, 8, 1}, []int{2, 2}, []int{2, 2}, []int{1, 1}, true, []int64{0, 0, 1, 0}},
		{"dilation", []int{8, 8, 1}, []int{3, 3}, []int{1, 1}, []int{2, 1}, true, []int64{2, 1, 2, 1}},
		{"window smaller than strides: no padding", []int{5, 5, 1}, []int{1, 1}, []int{3, 3}, []int{1, 1}, true, []int64{0, 0, 0, 0}},
		{"valid", []int{15, 14, 3}, []int{4, 3}, []int{2, 2}, []int{1, 1}, false, []int64{0, 0, 0, 0}},
		{"1D same, even kernel", []int{9, 4}, []int{4}, []int{1}, []int{1}, true, []int64{1, 2}},
		{"1D valid", []int{9, 4}, []int{4}, []int{2}, []int{1}, false, []int64{0, 0}},
	}
	for _, c := range cases {
		got, err := onnxPads(c.in, c.kernel, c.strides, c.dila, c.same)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: pads %v, want %v", c.name, got, c.want)
		}
	}
	if _, err := onnxPads([]int{4, 4, 1}, []int{3}, []int{1}, []int{1}, true); err == nil {
		t.Error("a 1D window on images: no error")
	}
}

// An unbuilt layer with weights is an error naming the fix, not a panic.
func TestONNXOfAnUnbuiltLayer(t *testing.T) {
	for _, l := range []ONNXMapper{Dense(2), Conv2D(2, 1), BatchNormalization(), Embedding(3, 2)} {
		if _, err := l.ONNX(nil, "input"); err == nil {
			t.Errorf("%T: no error", l)
		}
	}
}
