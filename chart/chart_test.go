package chart

import (
	"bytes"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTraceByHand(t *testing.T) {
	p := Panel{Title: "Training trace: loss per epoch", XLabel: "epoch", Series: []Series{
		{Name: "loss", X: []float64{1, 2, 3, 4, 5}, Y: []float64{4, 3, 2, 1, 0}},
		{Name: "val_loss", X: []float64{1, 2, 3, 4, 5}, Y: []float64{4, 3.5, 3, 2.5, 2}},
	}}
	var out bytes.Buffer
	if err := Trace(&out, p, 9, 5); err != nil {
		t.Fatal(err)
	}
	// Columns round((x-1)/4·8) = 0, 2, 4, 6, 8; rows 4 - round(y); both
	// series start at (1, 4): '#'.
	want := "Training trace: loss per epoch\n" +
		" 4 |# o\n" +
		"   |  * o o\n" +
		"   |    *   o\n" +
		"   |      *\n" +
		" 0 |        *\n" +
		"   +---------\n" +
		"    1       5  epoch\n" +
		"    * loss   o val_loss\n"
	if out.String() != want {
		t.Errorf("trace:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestTraceOfOnePoint(t *testing.T) {
	var out bytes.Buffer
	err := Trace(&out, Panel{XLabel: "epoch", Series: []Series{{Name: "loss", X: []float64{1}, Y: []float64{0.25}}}}, 4, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), " 0.25 |  *\n") {
		t.Errorf("a single point belongs in the middle:\n%s", out.String())
	}
}

func TestPanelsAreChecked(t *testing.T) {
	tests := []struct {
		name string
		p    Panel
		want string
	}{
		{"no series", Panel{Title: "t"}, "no series"},
		{"lengths", Panel{Series: []Series{{Name: "a", X: []float64{1, 2}, Y: []float64{1}}}}, "2 x values and 1 y values"},
		{"nan", Panel{Series: []Series{{Name: "a", X: []float64{1}, Y: []float64{math.NaN()}}}}, "non-finite"},
		{"log of zero", Panel{LogY: true, Series: []Series{{Name: "a", X: []float64{1}, Y: []float64{0}}}}, "logarithmic"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, err := range []error{Trace(&bytes.Buffer{}, tc.p, 10, 5), WritePNG(&bytes.Buffer{}, 100, 100, tc.p)} {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("error %v, want one mentioning %q", err, tc.want)
				}
			}
		})
	}
}

func TestSavePNGDrawsTheLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.png")
	loss := Panel{Title: "loss", XLabel: "epoch", Series: []Series{
		{Name: "loss", X: []float64{1, 2, 3}, Y: []float64{2, 1, 0.5}},
		{Name: "val_loss", X: []float64{1, 2, 3}, Y: []float64{2.2, 1.3, 0.9}, Dashed: true},
	}}
	sweep := Panel{Title: "sweep", LogX: true, LogY: true, Series: []Series{{Name: "CPU", X: []float64{100, 1000, 8000}, Y: []float64{1e-4, 0.05, 20}}}}
	if err := SavePNG(path, 800, 400, loss, sweep); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 800 || b.Dy() != 400 {
		t.Errorf("image is %dx%d, want 800x400", b.Dx(), b.Dy())
	}
	// The first series' blue must be drawn in both halves.
	blue := [2]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r>>8 == 31 && g>>8 == 119 && bl>>8 == 180 {
				blue[min(x*2/b.Dx(), 1)]++
			}
		}
	}
	if blue[0] < 50 || blue[1] < 50 {
		t.Errorf("blue pixels per half %v: the lines were not drawn", blue)
	}
	if err := SavePNG(filepath.Join(t.TempDir(), "x.png"), 100, 100, Panel{}); err == nil {
		t.Error("an empty panel was drawn")
	}
}
