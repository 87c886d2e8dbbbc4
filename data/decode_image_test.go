package data

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"slices"
	"strings"
	"testing"
)

// DecodeImage gives the pixels, resized, as ImageDatasetFromDirectory
// does: a 2×1 PNG of red 0 and 100 halves to one pixel of red 50 (the
// half-pixel centers fall between them), grayscale by BT.601 luma.
func TestDecodeImage(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 2, 1))
	img.Set(0, 0, color.NRGBA{0, 10, 200, 255})
	img.Set(1, 0, color.NRGBA{100, 30, 200, 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name                    string
		height, width, channels int
		want                    []float32
	}{
		{"rgb, resized", 1, 1, 3, []float32{50, 20, 200}},
		{"rgba as is", 1, 2, 4, []float32{0, 10, 200, 255, 100, 30, 200, 255}},
		{"grayscale", 1, 2, 1, []float32{float32((7471*200 + 38470*10 + 1<<15) >> 16), float32((19595*100 + 38470*30 + 7471*200 + 1<<15) >> 16)}},
	} {
		dst := make([]float32, tc.height*tc.width*tc.channels)
		if err := DecodeImage(bytes.NewReader(buf.Bytes()), dst, tc.height, tc.width, tc.channels); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(dst, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, dst, tc.want)
		}
	}
	for _, tc := range []struct {
		name                    string
		in                      []byte
		height, width, channels int
		dst                     int
		want                    string
	}{
		{"not an image", []byte("hello"), 1, 1, 3, 3, "data.DecodeImage: image: unknown format"},
		{"no size", buf.Bytes(), 0, 1, 3, 0, "size 0×1: give a positive height and width"},
		{"two channels", buf.Bytes(), 1, 1, 2, 2, "2 channels: give 1, 3 or 4"},
		{"small dst", buf.Bytes(), 2, 2, 3, 3, "dst holds 3 values, want 2×2×3 = 12"},
	} {
		err := DecodeImage(bytes.NewReader(tc.in), make([]float32, tc.dst), tc.height, tc.width, tc.channels)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}
