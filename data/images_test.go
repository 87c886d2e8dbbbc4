package data

import (
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/image/bmp"
)

// writeImage writes img to path in the format its extension names.
func writeImage(t *testing.T, path string, img image.Image) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png":
		err = png.Encode(f, img)
	case ".jpg", ".jpeg":
		err = jpeg.Encode(f, img, &jpeg.Options{Quality: 100})
	case ".gif":
		err = gif.Encode(f, img, nil)
	case ".bmp":
		err = bmp.Encode(f, img)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// solid is a w×h image of one color.
func solid(w, h int, c color.Color) image.Image {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, c)
		}
	}
	return img
}

// folder makes dir/cats with 3 images and dir/dogs with 2, of four
// formats, and a file that is no image.
func folder(t *testing.T) string {
	dir := t.TempDir()
	writeImage(t, filepath.Join(dir, "cats", "a.png"), solid(4, 4, color.NRGBA{10, 20, 30, 255}))
	writeImage(t, filepath.Join(dir, "cats", "b.bmp"), solid(3, 5, color.NRGBA{40, 50, 60, 255}))
	writeImage(t, filepath.Join(dir, "cats", "deeper", "c.gif"), solid(2, 2, color.NRGBA{0, 0, 0, 255}))
	writeImage(t, filepath.Join(dir, "dogs", "d.jpg"), solid(8, 8, color.NRGBA{200, 100, 50, 255}))
	writeImage(t, filepath.Join(dir, "dogs", "e.PNG"), solid(6, 3, color.NRGBA{255, 255, 255, 255}))
	if err := os.WriteFile(filepath.Join(dir, "dogs", "notes.txt"), []byte("not an image"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestImageFolderFindsClassesAndFiles(t *testing.T) {
	dir := folder(t)
	f, err := ImageDatasetFromDirectory(dir, ImageFolderOptions{ImageSize: [2]int{4, 4}, NoShuffle: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.ClassNames(); !slices.Equal(got, []string{"cats", "dogs"}) {
		t.Errorf("classes %v", got)
	}
	var names []string
	for _, p := range f.Files() {
		names = append(names, filepath.Base(p))
	}
	if want := []string{"a.png", "b.bmp", "c.gif", "d.jpg", "e.PNG"}; !slices.Equal(names, want) {
		t.Errorf("files %v, want %v", names, want)
	}
	if got := f.Labels(); !slices.Equal(got, []int{0, 0, 0, 1, 1}) {
		t.Errorf("labels %v", got)
	}
	if !slices.Equal(f.SampleShape(), []int{4, 4, 3}) || len(f.LabelShape()) != 0 {
		t.Errorf("sample shape %v, label shape %v", f.SampleShape(), f.LabelShape())
	}
	x := make([]float32, 5*4*4*3)
	if err := f.GatherInputs([]int{0, 1, 2, 3, 4}, x); err != nil {
		t.Fatal(err)
	}
	// Solid images stay solid whatever the resize; JPEG within its loss.
	for i, want := range [][3]float32{{10, 20, 30}, {40, 50, 60}, {0, 0, 0}, {200, 100, 50}, {255, 255, 255}} {
		px := x[i*48 : (i+1)*48]
		for j, v := range px {
			if d := math.Abs(float64(v - want[j%3])); d > 0 && (i != 3 || d > 3) {
				t.Fatalf("image %d (%s), value %d: %v, want %v", i, names[i], j, v, want[j%3])
			}
		}
	}
	ys := make([]float32, 2)
	if err := f.GatherLabels([]int{4, 0}, ys); err != nil || !slices.Equal(ys, []float32{1, 0}) {
		t.Errorf("labels %v, %v", ys, err)
	}
	// ClassNames picks and orders the classes.
	g, err := ImageDatasetFromDirectory(dir, ImageFolderOptions{ClassNames: []string{"dogs"}, NoShuffle: true, LabelMode: "categorical"})
	if err != nil {
		t.Fatal(err)
	}
	if g.Len() != 2 || !slices.Equal(g.LabelShape(), []int{1}) {
		t.Errorf("dogs only: %d images, label shape %v", g.Len(), g.LabelShape())
	}
}

// Resizing as TensorFlow's resize computes it: half-pixel centers,
// checked against values worked out by hand.
func TestResizeAsTensorFlow(t *testing.T) {
	row := []float32{0, 10}
	for _, c := range []struct {
		name    string
		src     []float32
		in, out int
		nearest bool
		want    []float32
	}{
		{"bilinear up 2→4", row, 2, 4, false, []float32{0, 2.5, 7.5, 10}},
		{"bilinear down 4→2", []float32{0, 4, 8, 16}, 4, 2, false, []float32{2, 12}},
		{"bilinear 3→2", []float32{0, 3, 6}, 3, 2, false, []float32{0.75, 5.25}},
		{"nearest up 2→4", row, 2, 4, true, []float32{0, 0, 10, 10}},
		{"nearest down 4→2", []float32{0, 4, 8, 16}, 4, 2, true, []float32{4, 16}},
	} {
		// A row, then the same as a column: each axis resizes alike.
		got := make([]float32, c.out)
		resize(c.src, 1, c.in, 1, got, 1, c.out, c.nearest)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s across: %v, want %v", c.name, got, c.want)
		}
		resize(c.src, c.in, 1, 1, got, c.out, 1, c.nearest)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s down: %v, want %v", c.name, got, c.want)
		}
	}
	// Two axes and two channels: each channel on its own, bilinear of
	// the four neighbours.
	src := []float32{0, 100, 10, 110, 20, 120, 30, 130} // 2×2, channels (v, v+100)
	got := make([]float32, 3*3*2)
	resize(src, 2, 2, 2, got, 3, 3, false)
	// Scale 2/3: sample centers at -1/6, 1/2, 7/6 along each axis.
	w := []float32{0, 0.5, 1}
	for y := range 3 {
		for x := range 3 {
			v := 0 + 10*w[x] + 20*w[y]
			if got[(y*3+x)*2] != v || got[(y*3+x)*2+1] != v+100 {
				t.Errorf("pixel (%d, %d): %v, want %v and %v", y, x, got[(y*3+x)*2:(y*3+x)*2+2], v, v+100)
			}
		}
	}
}

func TestImageFolderColorAndLabelModes(t *testing.T) {
	dir := t.TempDir()
	writeImage(t, filepath.Join(dir, "no", "a.png"), solid(2, 2, color.NRGBA{100, 150, 200, 128}))
	writeImage(t, filepath.Join(dir, "yes", "b.png"), solid(2, 2, color.NRGBA{0, 0, 0, 255}))
	for _, c := range []struct {
		mode string
		want []float32
	}{
		{"grayscale", []float32{float32((19595*100 + 38470*150 + 7471*200 + 1<<15) >> 16)}},
		{"rgb", []float32{100, 150, 200}},
		{"rgba", []float32{100, 150, 200, 128}},
	} {
		f, err := ImageDatasetFromDirectory(dir, ImageFolderOptions{ColorMode: c.mode, ImageSize: [2]int{2, 2}, NoShuffle: true, LabelMode: "binary"})
		if err != nil {
			t.Fatal(err)
		}
		x := make([]float32, 4*len(c.want))
		if err := f.GatherInputs([]int{0}, x); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(x[:len(c.want)], c.want) {
			t.Errorf("%s: %v, want %v", c.mode, x[:len(c.want)], c.want)
		}
		y := make([]float32, 2)
		if err := f.GatherLabels([]int{1, 0}, y); err != nil || !slices.Equal(y, []float32{1, 0}) || !slices.Equal(f.LabelShape(), []int{1}) {
			t.Errorf("binary labels %v (shape %v), %v", y, f.LabelShape(), err)
		}
	}
	f, err := ImageDatasetFromDirectory(dir, ImageFolderOptions{LabelMode: "categorical", NoShuffle: true, ImageSize: [2]int{1, 1}})
	if err != nil {
		t.Fatal(err)
	}
	y := make([]float32, 4)
	if err := f.GatherLabels([]int{1, 0}, y); err != nil || !slices.Equal(y, []float32{0, 1, 1, 0}) {
		t.Errorf("one-hot labels %v, %v", y, err)
	}
}

// The training and validation subsets of one seed split the files, the
// validation subset Keras' last int(split·n); another seed shuffles
// otherwise.
func TestImageFolderValidationSplit(t *testing.T) {
	dir := t.TempDir()
	for i := range 10 {
		writeImage(t, filepath.Join(dir, []string{"a", "b"}[i%2], string(rune('a'+i))+".png"), solid(2, 2, color.Gray{uint8(i * 20)}))
	}
	open := func(subset string, seed uint64) *ImageFolder {
		f, err := ImageDatasetFromDirectory(dir, ImageFolderOptions{ValidationSplit: 0.3, Subset: subset, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	train, val := open("training", 1), open("validation", 1)
	if train.Len() != 7 || val.Len() != 3 {
		t.Fatalf("training %d and validation %d images, want 7 and 3", train.Len(), val.Len())
	}
	all := append(train.Files(), val.Files()...)
	sorted := slices.Sorted(slices.Values(all))
	if len(slices.Compact(sorted)) != 10 {
		t.Errorf("the subsets overlap or miss files: %v", all)
	}
	if slices.Equal(open("training", 2).Files(), train.Files()) {
		t.Error("seeds 1 and 2 shuffle alike")
	}
	if !slices.Equal(open("training", 1).Files(), train.Files()) {
		t.Error("one seed shuffles two ways")
	}
}

func TestImageFolderErrors(t *testing.T) {
	good := folder(t)
	empty := t.TempDir()
	noImages := t.TempDir()
	if err := os.MkdirAll(filepath.Join(noImages, "cats"), 0o755); err != nil {
		t.Fatal(err)
	}
	bad := folder(t)
	if err := os.WriteFile(filepath.Join(bad, "dogs", "broken.png"), []byte("PNG? no"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		dir  string
		opts ImageFolderOptions
		want []string
	}{
		{"a missing folder", filepath.Join(good, "nope"), ImageFolderOptions{}, []string{"reading the image folder"}},
		{"no class folders", empty, ImageFolderOptions{}, []string{"has no class folders"}},
		{"an empty class folder", noImages, ImageFolderOptions{}, []string{"cats has no images"}},
		{"a broken image", bad, ImageFolderOptions{}, []string{"broken.png is not a BMP, GIF, JPEG or PNG image", "SkipBad"}},
		{"binary of 3 classes", good, ImageFolderOptions{LabelMode: "binary", ClassNames: []string{"cats"}}, []string{"needs 2 classes"}},
		{"an unknown class", good, ImageFolderOptions{ClassNames: []string{"cats", "birds"}}, []string{`class "birds" has no folder`, "cats, dogs"}},
		{"a split without a subset", good, ImageFolderOptions{ValidationSplit: 0.2}, []string{`"training" or "validation"`}},
		{"a subset without a split", good, ImageFolderOptions{Subset: "training"}, []string{"without a validation split"}},
		{"a bad color mode", good, ImageFolderOptions{ColorMode: "cmyk"}, []string{`color mode "cmyk"`}},
		{"labels of another count", good, ImageFolderOptions{Labels: []int{1, 2}}, []string{"2 labels given for the 5 images"}},
		{"a bad size", good, ImageFolderOptions{ImageSize: [2]int{0, 5}}, []string{"positive height and width"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ImageDatasetFromDirectory(c.dir, c.opts)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not say %q:\n%v", w, err)
				}
			}
		})
	}
	f, err := ImageDatasetFromDirectory(bad, ImageFolderOptions{SkipBad: true})
	if err != nil {
		t.Fatal(err)
	}
	if f.Len() != 5 || len(f.Skipped()) != 1 {
		t.Errorf("SkipBad: %d images and %d skipped, want 5 and 1", f.Len(), len(f.Skipped()))
	}
	// A file damaged after its header fails the batch that reads it,
	// naming the file.
	trunc := t.TempDir()
	writeImage(t, filepath.Join(trunc, "x", "a.png"), solid(64, 64, color.NRGBA{1, 2, 3, 255}))
	g, err := ImageDatasetFromDirectory(trunc, ImageFolderOptions{ImageSize: [2]int{8, 8}})
	if err != nil {
		t.Fatal(err)
	}
	path := g.Files()[0]
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, whole[:len(whole)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := g.GatherInputs([]int{0}, make([]float32, 8*8*3)); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("a truncated image: %v, want an error naming %s", err, path)
	}
}

func TestCropToAspect(t *testing.T) {
	for _, c := range []struct {
		w, h, th, tw int
		want         image.Rectangle
	}{
		{8, 4, 4, 4, image.Rect(2, 0, 6, 4)},
		{4, 8, 4, 4, image.Rect(0, 2, 4, 6)},
		{6, 4, 2, 3, image.Rect(0, 0, 6, 4)},
		{10, 2, 256, 1, image.Rect(4, 0, 5, 2)}, // a crop under a pixel wide: one pixel, as Keras
	} {
		if got := cropToAspect(image.Rect(0, 0, c.w, c.h), c.th, c.tw); got != c.want {
			t.Errorf("%d×%d to %d:%d: %v, want %v", c.w, c.h, c.tw, c.th, got, c.want)
		}
	}
}
