package applications_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/applications"
)

// The layers are named as Keras names them, in the order the example's
// code makes them: the first stride-2 block's shortcut, a 1×1 convolution
// of 16·32+32 weights made after the block's two 3×3 convolutions, is
// conv2d_9, the second one conv2d_16.
func TestResNet20LayerNames(t *testing.T) {
	m, err := applications.ResNetV1(20, []int{32, 32, 3}, 10)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := m.Summary(&b); err != nil {
		t.Fatal(err)
	}
	for _, re := range []string{
		`(?m)^ conv2d_9 \(Conv2D\) +\(None, 16, 16, 32\) +544 +\['activation_6\[0\]\[0\]'\]`,
		`(?m)^ conv2d_16 \(Conv2D\) +\(None, 8, 8, 64\) +2112 +\['activation_12\[0\]\[0\]'\]`,
		`(?m)^ conv2d_20 \(Conv2D\) `,
		`(?m)^ dense \(Dense\) +\(None, 10\) +650 +\['flatten\[0\]\[0\]'\]`,
	} {
		if !regexp.MustCompile(re).MatchString(b.String()) {
			t.Errorf("no row matching %s in:\n%s", re, b.String())
		}
	}
}
