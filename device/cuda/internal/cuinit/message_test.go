package cuinit

import (
	"strings"
	"testing"
)

func TestWhyNamesTheStub(t *testing.T) {
	got := Why(34, "", "", "/work/.cuda/lib/stubs/libcuda.so.1")
	for _, want := range []string{
		"cuInit failed: CUDA_ERROR_STUB_LIBRARY (34)",
		"/work/.cuda/lib/stubs/libcuda.so.1 is the CUDA toolkit's link stub",
		"NVIDIA GPU and its driver installed",
		"take the stubs directory out of LD_LIBRARY_PATH",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Why(34, ...) = %q, want it to contain %q", got, want)
		}
	}
	if strings.Contains(got, "unknown CUDA error") {
		t.Errorf("Why(34, ...) = %q: the stub is known", got)
	}
	if got := Why(34, "", "", ""); !strings.Contains(got, "the libcuda.so.1 loaded is the CUDA toolkit's link stub") {
		t.Errorf("Why(34) without a path = %q", got)
	}
}

func TestWhy(t *testing.T) {
	for _, tc := range []struct {
		code            int
		name, desc, lib string
		want            string
	}{
		{100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected", "",
			"cuInit failed: CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected"},
		{100, "", "", "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
			"cuInit failed: CUDA_ERROR_NO_DEVICE (100) (libcuda.so.1: /usr/lib/x86_64-linux-gnu/libcuda.so.1)"},
		{35, "", "", "", "cuInit failed: CUDA_ERROR_INSUFFICIENT_DRIVER (35)"},
		{12345, "", "", "", "cuInit failed: unknown CUDA error (12345)"},
	} {
		if got := Why(tc.code, tc.name, tc.desc, tc.lib); got != tc.want {
			t.Errorf("Why(%d, %q, %q, %q) = %q, want %q", tc.code, tc.name, tc.desc, tc.lib, got, tc.want)
		}
	}
}

func TestItoa(t *testing.T) {
	for n, want := range map[int]string{0: "0", 7: "7", 34: "34", 999: "999", -3: "-3", 1 << 40: "1099511627776"} {
		if got := itoa(n); got != want {
			t.Errorf("itoa(%d) = %q, want %q", n, got, want)
		}
	}
}
