package device

import (
	"errors"
	"strings"
	"testing"
)

func TestParseSpecAcceptsTensorFlowSpellings(t *testing.T) {
	tests := []struct {
		in   string
		want Spec
	}{
		{"/GPU:0", NewSpec(GPU, 0)},
		{"/device:GPU:0", NewSpec(GPU, 0)},
		{"GPU:0", NewSpec(GPU, 0)},
		{"/gpu:0", NewSpec(GPU, 0)},
		{"gpu", NewSpec(GPU, 0)},
		{"GPU", NewSpec(GPU, 0)},
		{"/GPU", NewSpec(GPU, 0)},
		{"/device:GPU", NewSpec(GPU, 0)},
		{"/device:gpu:2", NewSpec(GPU, 2)},
		{"/CPU:0", NewSpec(CPU, 0)},
		{"/cpu:0", NewSpec(CPU, 0)},
		{"cpu", NewSpec(CPU, 0)},
		{"/device:GPU:1", NewSpec(GPU, 1)},
		{"/GPU:10", NewSpec(GPU, 10)},
		{"/job:localhost/replica:0/task:0/device:GPU:1", NewSpec(GPU, 1)},
		{"/job:localhost/device:CPU:0", NewSpec(CPU, 0)},
		{"/job:localhost/GPU:3", NewSpec(GPU, 3)},
		{"/job:localhost/replica:2/task:5/device:CPU:0", Spec{Job: "localhost", Replica: 2, Task: 5, Kind: CPU}},
		{"/device:CPU:0/job:localhost", NewSpec(CPU, 0)},
		{"  /GPU:0\n", NewSpec(GPU, 0)},
		{"\t/job:localhost/replica:0/task:0/device:CPU:0 ", NewSpec(CPU, 0)},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSpec(tt.in)
			if err != nil {
				t.Fatalf("ParseSpec(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("ParseSpec(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseSpecErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		// every message must contain each of these
		want []string
	}{
		{"empty", "", []string{`""`, "empty"}},
		{"blank", "   ", []string{`"   "`, "empty"}},
		{"only a slash", "/", []string{`"/"`, "names no device"}},
		{"unknown type", "/TPU:0", []string{`"/TPU:0"`, `unknown device type "TPU"`, "gokeras knows CPU and GPU"}},
		{"unknown type after device", "/device:TPU:0", []string{`unknown device type "TPU"`, "CPU and GPU"}},
		{"letter index", "/GPU:x", []string{`"/GPU:x"`, `device index "x"`, "non-negative integer"}},
		{"negative index", "/GPU:-1", []string{`"/GPU:-1"`, `device index "-1"`}},
		{"signed index", "/GPU:+1", []string{`device index "+1"`}},
		{"empty index", "/GPU:", []string{`device index ""`}},
		{"index overflow", "/GPU:99999999999999999999999", []string{"non-negative integer"}},
		{"too many parts", "/device:GPU:0:1", []string{"too many parts"}},
		{"two device types", "/CPU:0/GPU:0", []string{`"/CPU:0/GPU:0"`, "two devices"}},
		{"two device fields", "/device:CPU:0/device:GPU:0", []string{"two devices"}},
		{"bare then device field", "/GPU:0/device:CPU:0", []string{"two devices"}},
		{"unknown field", "/job:localhost/partition:3/device:CPU:0", []string{`unknown field "partition"`}},
		{"unknown lower-case field", "/tpu:0", []string{`unknown field "tpu"`}},
		{"duplicated job", "/job:localhost/job:localhost/device:CPU:0", []string{`"job" appears twice`}},
		{"duplicated replica", "/replica:0/replica:0/CPU:0", []string{`"replica" appears twice`}},
		{"duplicated task", "/task:0/task:1/CPU:0", []string{`"task" appears twice`}},
		{"remote job", "/job:worker/replica:0/task:0/device:GPU:0", []string{`job "worker" does not exist`, "only the local job"}},
		{"empty job", "/job:/device:CPU:0", []string{`job "" does not exist`}},
		{"bad replica", "/replica:x/CPU:0", []string{`replica "x"`}},
		{"bad task", "/task:-2/CPU:0", []string{`task "-2"`}},
		{"no device type", "/job:localhost/replica:0/task:0", []string{"names no device type"}},
		{"device without type", "/device:", []string{"needs a device type"}},
		{"double slash", "//GPU:0", []string{"empty field"}},
		{"trailing slash", "/GPU:0/", []string{"empty field"}},
		{"inner space", "/GPU: 0", []string{`device index " 0"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSpec(tt.in)
			if err == nil {
				t.Fatalf("ParseSpec(%q) = %+v, want an error", tt.in, got)
			}
			if !errors.Is(err, ErrInvalidSpec) {
				t.Errorf("ParseSpec(%q) error %v does not wrap ErrInvalidSpec", tt.in, err)
			}
			if got != (Spec{}) {
				t.Errorf("ParseSpec(%q) returned %+v with its error, want the zero Spec", tt.in, got)
			}
			msg := err.Error()
			for _, w := range append(tt.want, "/GPU:1") { // every message says what is accepted
				if !strings.Contains(msg, w) {
					t.Errorf("ParseSpec(%q) error %q does not contain %q", tt.in, msg, w)
				}
			}
		})
	}
}

func TestSpecStringAndShort(t *testing.T) {
	tests := []struct {
		spec      Spec
		canonical string
		short     string
	}{
		{NewSpec(CPU, 0), "/job:localhost/replica:0/task:0/device:CPU:0", "/CPU:0"},
		{NewSpec(GPU, 0), "/job:localhost/replica:0/task:0/device:GPU:0", "/GPU:0"},
		{NewSpec(GPU, 7), "/job:localhost/replica:0/task:0/device:GPU:7", "/GPU:7"},
		{Spec{Kind: GPU, Index: 1}, "/job:localhost/replica:0/task:0/device:GPU:1", "/GPU:1"},
		{Spec{Job: "localhost", Replica: 1, Task: 2, Kind: CPU}, "/job:localhost/replica:1/task:2/device:CPU:0", "/CPU:0"},
		{Spec{}, "", ""},
	}
	for _, tt := range tests {
		if got := tt.spec.String(); got != tt.canonical {
			t.Errorf("%+v.String() = %q, want %q", tt.spec, got, tt.canonical)
		}
		if got := tt.spec.Short(); got != tt.short {
			t.Errorf("%+v.Short() = %q, want %q", tt.spec, got, tt.short)
		}
	}
}

func TestSpecRoundTrips(t *testing.T) {
	inputs := []string{
		"/GPU:0", "/device:GPU:0", "GPU:0", "/gpu:0", "gpu", "/CPU:0", "/cpu:0",
		"/job:localhost/replica:0/task:0/device:GPU:1", "/job:localhost/device:CPU:0",
		"/device:GPU:1", "/job:localhost/replica:3/task:4/device:GPU:12",
	}
	for _, in := range inputs {
		spec, err := ParseSpec(in)
		if err != nil {
			t.Fatalf("ParseSpec(%q): %v", in, err)
		}
		for _, printed := range []string{spec.String(), spec.Short()} {
			again, err := ParseSpec(printed)
			if err != nil {
				t.Fatalf("ParseSpec(%q) (printed from %q): %v", printed, in, err)
			}
			if printed == spec.String() && again != spec {
				t.Errorf("canonical round trip of %q: %q parsed to %+v, want %+v", in, printed, again, spec)
			}
			if again.Kind != spec.Kind || again.Index != spec.Index {
				t.Errorf("short round trip of %q: %q parsed to %+v", in, printed, again)
			}
		}
	}
}

func TestParseIndex(t *testing.T) {
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"0", 0, true}, {"7", 7, true}, {"0012", 12, true},
		{"", 0, false}, {"-1", 0, false}, {"+1", 0, false}, {"1.0", 0, false},
		{" 1", 0, false}, {"x", 0, false}, {"99999999999999999999999", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseIndex(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseIndex(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
