package pyformat

import (
	"math"
	"strings"
	"testing"
)

// The expected strings are what CPython 3 prints for the same calls.
func TestPyRepr(t *testing.T) {
	tests := []struct {
		x    float64
		want string
	}{
		{1, "1.0"}, {0.5, "0.5"}, {0, "0.0"}, {math.Copysign(0, -1), "-0.0"},
		{1.8124077320098877, "1.8124077320098877"},
		{float64(float32(0.001)), "0.0010000000474974513"},
		{0.0001, "0.0001"}, {0.00001, "1e-05"}, {1.5e-7, "1.5e-07"},
		{1234567.0, "1234567.0"}, {1e15, "1000000000000000.0"}, {1e16, "1e+16"}, {-2.5e20, "-2.5e+20"},
		{math.NaN(), "nan"}, {math.Inf(1), "inf"}, {math.Inf(-1), "-inf"},
	}
	for _, tc := range tests {
		if got := Repr(tc.x); got != tc.want {
			t.Errorf("Repr(%v) = %q, want %q", tc.x, got, tc.want)
		}
	}
}

func TestPyFormat(t *testing.T) {
	values := map[string]any{"epoch": 7, "val_loss": 0.123456, "accuracy": 0.5, "big": 1234567.891, "neg": -3}
	tests := []struct {
		template, want string
	}{
		{"weights.{epoch:02d}-{val_loss:.2f}.hdf5", "weights.07-0.12.hdf5"},
		{"ckpt-{epoch}.safetensors", "ckpt-7.safetensors"},
		{"{epoch:03}", "007"},
		{"{epoch:>4}|{epoch:<4}|{epoch:^5}|{epoch:*^5}", "   7|7   |  7  |**7**"},
		{"{neg:05d} {neg:+d} {epoch:+d} {epoch: d}", "-0003 -3 +7  7"},
		{"{val_loss}", "0.123456"},
		{"{accuracy:.1%} {accuracy:%}", "50.0% 50.000000%"},
		{"{val_loss:.3e} {val_loss:E}", "1.235e-01 1.234560E-01"},
		{"{val_loss:g} {big:g} {big:.3g}", "0.123456 1.23457e+06 1.23e+06"},
		{"{big:,.2f} {big:_.0f}", "1,234,567.89 1_234_568"},
		{"{epoch:.2f}", "7.00"},
		{"{accuracy:.3}", "0.5"},
		{"{{epoch}} {{{epoch}}}", "{epoch} {7}"},
	}
	for _, tc := range tests {
		got, err := Format(tc.template, values)
		if err != nil || got != tc.want {
			t.Errorf("Format(%q) = %q, %v; want %q", tc.template, got, err, tc.want)
		}
	}
	bad := []struct{ template, want string }{
		{"{missing}", "not among the figures: accuracy, big, epoch, neg, val_loss"},
		{"{val_loss:d}", "unknown format code 'd' for a float"},
		{"{epoch:.2d}", "precision not allowed"},
		{"{epoch", "unclosed"},
		{"a}b", "single '}'"},
		{"{epoch!r}", "plain names"},
	}
	for _, tc := range bad {
		if _, err := Format(tc.template, values); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Format(%q) error %v, want one mentioning %q", tc.template, err, tc.want)
		}
	}
}
