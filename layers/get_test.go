package layers

import (
	"strings"
	"testing"
)

// TestGetActivationRoundTrips looks up every activation by its Keras name,
// in any case, and checks that an unknown name lists the known ones.
func TestGetActivationRoundTrips(t *testing.T) {
	activations := []Activation{Linear, ReLU, Sigmoid, Tanh, Softmax, GELU, GELUApproximate, Swish, ELU, SELU,
		Softplus, Softsign, HardSigmoid, Exponential, LeakyReLU}
	for _, a := range activations {
		for _, name := range []string{a.String(), strings.ToUpper(a.String()), " " + a.String() + " "} {
			got, err := GetActivation(name)
			if err != nil || got != a {
				t.Errorf("GetActivation(%q) = %v, %v; want %v", name, got, err, a)
			}
		}
	}
	if got, err := GetActivation(""); err != nil || got != Linear {
		t.Errorf(`GetActivation("") = %v, %v; want linear, as Keras' None`, got, err)
	}
	if got, err := GetActivation("SiLU"); err != nil || got != Swish {
		t.Errorf(`GetActivation("SiLU") = %v, %v; want swish, Keras 3's name for it`, got, err)
	}
	_, err := GetActivation("mish")
	if err == nil {
		t.Fatal(`GetActivation("mish") found one`)
	}
	for _, want := range []string{`"mish"`, "linear, relu, sigmoid, tanh, softmax, gelu, gelu_approximate, swish, elu, selu"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// TestGetInitializerRoundTrips looks up every initializer by its Keras
// name, its aliases and its class name, and checks that an unknown name
// lists the known ones.
func TestGetInitializerRoundTrips(t *testing.T) {
	for _, k := range initializers {
		for _, name := range append([]string{k.class, strings.ToUpper(k.names[0])}, k.names...) {
			got, err := GetInitializer(name)
			if err != nil || got.Name() != k.names[0] {
				t.Errorf("GetInitializer(%q) = %v, %v; want %s", name, got, err, k.names[0])
			}
		}
	}
	for _, i := range []Initializer{GlorotUniform(), HeNormal(), Zeros(), Ones(), RandomNormal(0, 0.05), Orthogonal(1)} {
		if got, err := GetInitializer(i.Name()); err != nil || got != i {
			t.Errorf("GetInitializer(%q) = %v, %v; want %v", i.Name(), got, err, i)
		}
	}
	_, err := GetInitializer("lecun_normal")
	if err == nil {
		t.Fatal(`GetInitializer("lecun_normal") found one`)
	}
	for _, want := range []string{`"lecun_normal"`, "glorot_uniform, he_normal, normal, one, ones, orthogonal, random_normal, random_uniform, uniform, zero, zeros", "GlorotUniform"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
