package configargs

import (
	"strings"
	"testing"
)

func TestDecodeNamesTheArgument(t *testing.T) {
	type args struct {
		Units   int     `json:"units"`
		Rate    float64 `json:"rate"`
		Padding string  `json:"padding"`
	}
	tests := []struct {
		in   map[string]any
		want string
	}{
		{map[string]any{"units": "ten"}, `argument "units" is a JSON string where an integer is wanted`},
		{map[string]any{"rate": true}, `argument "rate" is a JSON bool where a number is wanted`},
		{map[string]any{"filters": 3}, `unknown argument "filters"`},
	}
	for _, tc := range tests {
		var a args
		err := Decode(tc.in, &a)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Decode(%v): %v; want %q", tc.in, err, tc.want)
		}
	}
	a := args{Units: 1, Rate: 0.5}
	if err := Decode(map[string]any{"units": 64}, &a); err != nil || a.Units != 64 || a.Rate != 0.5 {
		t.Errorf("Decode kept %+v, %v; want units 64 and the default rate", a, err)
	}
	var p *args
	if !IsNil(nil) || !IsNil(p) || IsNil(&a) {
		t.Error("IsNil")
	}
}
