package applications_test

import (
	"strings"
	"testing"

	"github.com/gokeras/gokeras/applications"
)

// ResNet-20 has Keras' cifar10_resnet example's parameters: 274,442, of
// which 1,376 are BatchNormalization's moving statistics.
func TestResNet20Params(t *testing.T) {
	m, err := applications.ResNetV1(20, []int{32, 32, 3}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Build(32, 32, 3); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := m.Summary(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Total params: 274,442", "Trainable params: 273,066", "Non-trainable params: 1,376",
		"add (Add)", "['activation[0][0]',", "(None, 8, 8, 64)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary has no %q:\n%s", want, b.String())
		}
	}
	if _, err := applications.ResNetV1(21, []int{32, 32, 3}, 10); err == nil {
		t.Error("depth 21 accepted")
	}
}
