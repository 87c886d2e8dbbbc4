package data

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	_ "image/gif"  // GIF decoder for image.Decode
	_ "image/jpeg" // JPEG decoder
	_ "image/png"  // PNG decoder
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	_ "golang.org/x/image/bmp" // BMP decoder
)

// ImageFolderOptions are the arguments of ImageDatasetFromDirectory, with
// Keras' image_dataset_from_directory's names and defaults: a zero field
// takes Keras' default.
type ImageFolderOptions struct {
	// Labels are the images' classes, one per file in the order of
	// Files() without shuffling (the class folders sorted, then each
	// folder's files sorted by path), as Keras' labels given as a list;
	// nil infers them from the folders (Keras' labels="inferred"). Unlike
	// Keras, the files are found in class folders either way (Keras then
	// reads every image under dir), ClassNames still picks the folders,
	// and "int" labels may exceed the count of folders; "categorical" and
	// "binary" ones may not.
	Labels []int
	// LabelMode is "int" (the default: class indices, label shape ()),
	// "categorical" (one-hot rows of len(ClassNames)) or "binary" (0 or 1,
	// label shape (1), for two classes).
	LabelMode string
	// ClassNames are the class folders to read, in the order of their
	// indices; nil reads every folder, sorted by name.
	ClassNames []string
	// ColorMode is "rgb" (the default, 3 channels), "grayscale" (1) or
	// "rgba" (4).
	ColorMode string
	// ImageSize is the height and width every image is resized to;
	// (256, 256) unless given.
	ImageSize [2]int
	// Interpolation is how images are resized: "bilinear" (the default)
	// or "nearest", as TensorFlow's resize computes them (half-pixel
	// centers, no antialiasing).
	Interpolation string
	// CropToAspectRatio crops each image around its center to the aspect
	// ratio of ImageSize before resizing, instead of stretching it.
	CropToAspectRatio bool
	// NoShuffle keeps the files in their sorted order; by default they
	// are shuffled once with Seed, as Keras' shuffle=True (which then
	// shuffles again each epoch: Fit shuffles each epoch here).
	NoShuffle bool
	// Seed seeds the shuffle and so the validation split.
	Seed uint64
	// ValidationSplit is the fraction of the files held out for
	// validation (0 to 1, exclusive), and Subset which part this dataset
	// is: "training" or "validation". Call ImageDatasetFromDirectory once
	// for each, with the same Seed, to get both, as Keras did before
	// subset="both".
	ValidationSplit float64
	Subset          string
	// SkipBad leaves out the files that are not images of the formats
	// read (their header does not decode), counting them in Skipped,
	// instead of failing on the first.
	SkipBad bool
}

// imageExtensions are the files read, as Keras' allowed formats.
var imageExtensions = []string{".bmp", ".gif", ".jpeg", ".jpg", ".png"}

// ImageFolder is a Dataset of the images in a folder of class folders,
// made by ImageDatasetFromDirectory. Its samples are float32 pixels in
// [0, 255], height × width × channels, as Keras gives them (rescale them
// in the model); each image is decoded and resized when its batch is
// gathered, by up to GOMAXPROCS goroutines (wrap it in Prefetch to do
// that while the model trains).
type ImageFolder struct {
	files      []string
	labels     []int
	classNames []string
	labelMode  string
	height     int
	width      int
	channels   int
	nearest    bool
	crop       bool
	skipped    []string
}

// ImageDatasetFromDirectory makes a Dataset of the images in dir, as
// Keras' image_dataset_from_directory does: dir holds one folder per
// class (class_a/, class_b/, ...), whose images (BMP, GIF, JPEG and PNG
// files, in the folder or below it) are that class's. Files of other
// extensions are ignored.
//
//	train, err := data.ImageDatasetFromDirectory("flowers", data.ImageFolderOptions{
//		ImageSize: [2]int{180, 180}, ValidationSplit: 0.2, Subset: "training", Seed: 123})
//
// Each image's header is read here: a file that is not an image of those
// formats is an error naming it (or, with SkipBad, left out and counted),
// so that a broken file stops nothing later; an image damaged after its
// header fails the batch that reads it, naming the file. An empty class
// folder, a folder with no class folders and a folder without images are
// errors. A GIF is read as its first frame; grayscale from color is ITU-R
// BT.601 luma (Go's color.GrayModel's weights), where TensorFlow's
// decoders differ slightly by format.
func ImageDatasetFromDirectory(dir string, opts ImageFolderOptions) (*ImageFolder, error) {
	what := "data.ImageDatasetFromDirectory"
	f := &ImageFolder{labelMode: opts.LabelMode}
	if f.labelMode == "" {
		f.labelMode = "int"
	}
	if !slices.Contains([]string{"int", "categorical", "binary"}, f.labelMode) {
		return nil, fmt.Errorf("%s: label mode %q: use \"int\", \"categorical\" or \"binary\"", what, opts.LabelMode)
	}
	switch opts.ColorMode {
	case "", "rgb":
		f.channels = 3
	case "grayscale":
		f.channels = 1
	case "rgba":
		f.channels = 4
	default:
		return nil, fmt.Errorf("%s: color mode %q: use \"rgb\", \"grayscale\" or \"rgba\"", what, opts.ColorMode)
	}
	f.height, f.width = opts.ImageSize[0], opts.ImageSize[1]
	if f.height == 0 && f.width == 0 {
		f.height, f.width = 256, 256
	}
	if f.height <= 0 || f.width <= 0 {
		return nil, fmt.Errorf("%s: image size %v: give a positive height and width", what, opts.ImageSize)
	}
	switch opts.Interpolation {
	case "", "bilinear":
	case "nearest":
		f.nearest = true
	default:
		return nil, fmt.Errorf("%s: interpolation %q: use \"bilinear\" or \"nearest\"", what, opts.Interpolation)
	}
	f.crop = opts.CropToAspectRatio
	split := opts.ValidationSplit
	switch {
	case split < 0 || split >= 1 || math.IsNaN(split):
		return nil, fmt.Errorf("%s: validation split %v: give a fraction in [0, 1)", what, split)
	case split > 0 && opts.Subset != "training" && opts.Subset != "validation":
		return nil, fmt.Errorf("%s: validation split %v with subset %q: say which part this is, \"training\" or \"validation\"", what, split, opts.Subset)
	case split == 0 && opts.Subset != "":
		return nil, fmt.Errorf("%s: subset %q without a validation split: give ValidationSplit too", what, opts.Subset)
	}

	classes, err := classFolders(dir, opts.ClassNames)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	f.classNames = classes
	if f.labelMode == "binary" && len(classes) != 2 {
		return nil, fmt.Errorf("%s: label mode \"binary\" needs 2 classes, but %s has %d (%s): use \"int\" or \"categorical\"", what, dir, len(classes), strings.Join(classes, ", "))
	}
	for c, name := range classes {
		files, err := imageFiles(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: class folder %s has no images (%s files)", what, filepath.Join(dir, name), strings.Join(imageExtensions, ", "))
		}
		for _, file := range files {
			f.files = append(f.files, file)
			f.labels = append(f.labels, c)
		}
	}
	if opts.Labels != nil {
		if len(opts.Labels) != len(f.files) {
			return nil, fmt.Errorf("%s: %d labels given for the %d images found in %s: give one per image, in the order of the sorted class folders and files", what, len(opts.Labels), len(f.files), dir)
		}
		n := len(classes)
		for i, l := range opts.Labels {
			if l < 0 || (f.labelMode != "int" && l >= n) {
				return nil, fmt.Errorf("%s: label %d of %s is %d, not a class in [0, %d)", what, i, f.files[i], l, n)
			}
		}
		f.labels = slices.Clone(opts.Labels)
	}
	// Headers first: a file that is no image is known before training.
	keep := f.files[:0]
	keepLabels := f.labels[:0]
	for i, file := range f.files {
		if err := checkImageHeader(file); err != nil {
			if !opts.SkipBad {
				return nil, fmt.Errorf("%s: %w; remove it, or set SkipBad to leave such files out", what, err)
			}
			f.skipped = append(f.skipped, file)
			continue
		}
		keep, keepLabels = append(keep, file), append(keepLabels, f.labels[i])
	}
	f.files, f.labels = keep, keepLabels
	if len(f.files) == 0 {
		return nil, fmt.Errorf("%s: no readable images in %s (%d skipped)", what, dir, len(f.skipped))
	}
	if !opts.NoShuffle {
		order := rand.New(rand.NewPCG(opts.Seed, 0x696d616765)).Perm(len(f.files))
		files, labels := make([]string, len(order)), make([]int, len(order))
		for i, j := range order {
			files[i], labels[i] = f.files[j], f.labels[j]
		}
		f.files, f.labels = files, labels
	}
	if split > 0 {
		// Keras holds out the last int(split·n) files.
		held := int(split * float64(len(f.files)))
		cut := len(f.files) - held
		if opts.Subset == "validation" {
			f.files, f.labels = f.files[cut:], f.labels[cut:]
		} else {
			f.files, f.labels = f.files[:cut], f.labels[:cut]
		}
		if len(f.files) == 0 {
			return nil, fmt.Errorf("%s: validation split %v of %d images leaves the %s subset empty: give more images or another split", what, split, len(keep), opts.Subset)
		}
	}
	return f, nil
}

// classFolders lists the class folders of dir: names, if given (each must
// be a folder of dir), else every folder, sorted.
func classFolders(dir string, names []string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the image folder: %w", err)
	}
	var found []string
	for _, e := range entries {
		if e.IsDir() {
			found = append(found, e.Name())
		}
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("%s has no class folders: put each class's images in a folder of its own (%s/class_a/..., %s/class_b/...)", dir, dir, dir)
	}
	if names == nil {
		return found, nil // os.ReadDir sorts by name
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return nil, fmt.Errorf("class name %q given twice", n)
		}
		seen[n] = true
		if !slices.Contains(found, n) {
			return nil, fmt.Errorf("class %q has no folder in %s (its folders: %s)", n, dir, strings.Join(found, ", "))
		}
	}
	return slices.Clone(names), nil
}

// imageFiles lists the image files in dir and below it, sorted by path.
func imageFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && slices.Contains(imageExtensions, strings.ToLower(filepath.Ext(path))) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing the images of %s: %w", dir, err)
	}
	slices.Sort(files)
	return files, nil
}

// checkImageHeader decodes the header of an image file.
func checkImageHeader(path string) error {
	r, err := os.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	cfg, format, err := image.DecodeConfig(r)
	if err != nil {
		return fmt.Errorf("%s is not a BMP, GIF, JPEG or PNG image: %w", path, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return fmt.Errorf("%s is a %s image of %d×%d pixels", path, format, cfg.Width, cfg.Height)
	}
	return nil
}

// Len is the number of images.
func (f *ImageFolder) Len() int { return len(f.files) }

// SampleShape is (height, width, channels).
func (f *ImageFolder) SampleShape() []int { return []int{f.height, f.width, f.channels} }

// LabelShape is () for class indices, (classes) for one-hot labels and
// (1) for binary ones.
func (f *ImageFolder) LabelShape() []int {
	switch f.labelMode {
	case "categorical":
		return []int{len(f.classNames)}
	case "binary":
		return []int{1}
	}
	return []int{}
}

// ClassNames are the classes' names, in the order of their indices.
func (f *ImageFolder) ClassNames() []string { return slices.Clone(f.classNames) }

// Files are the image files, in the order of the samples.
func (f *ImageFolder) Files() []string { return slices.Clone(f.files) }

// Labels are the samples' class indices, in order.
func (f *ImageFolder) Labels() []int { return slices.Clone(f.labels) }

// Skipped are the files SkipBad left out.
func (f *ImageFolder) Skipped() []string { return slices.Clone(f.skipped) }

// GatherLabels writes the labels of the samples at indices.
func (f *ImageFolder) GatherLabels(indices []int, dst []float32) error {
	cols := max(1, len(f.LabelShape()))
	if f.labelMode == "categorical" {
		cols = len(f.classNames)
	}
	if err := checkGather(indices, dst, len(f.files), cols); err != nil {
		return err
	}
	for i, idx := range indices {
		row := dst[i*cols : (i+1)*cols]
		if f.labelMode == "categorical" {
			clear(row)
			row[f.labels[idx]] = 1
			continue
		}
		row[0] = float32(f.labels[idx])
	}
	return nil
}

// GatherInputs decodes and resizes the images at indices into dst, up to
// GOMAXPROCS at a time. A file that does not decode is an error naming it.
func (f *ImageFolder) GatherInputs(indices []int, dst []float32) error {
	size := f.height * f.width * f.channels
	if err := checkGather(indices, dst, len(f.files), size); err != nil {
		return err
	}
	workers := min(runtime.GOMAXPROCS(0), len(indices))
	errs := make([]error, len(indices))
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Go(func() {
			for i := range next {
				errs[i] = f.loadSafely(f.files[indices[i]], dst[i*size:(i+1)*size])
			}
		})
	}
	for i := range indices {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

// loadSafely is load, with a panic in a decoder (a file that crashes
// it) turned into an error naming the file: a worker's panic would end
// the program.
func (f *ImageFolder) loadSafely(path string, dst []float32) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("decoding %s: the decoder failed: %v", path, r)
		}
	}()
	return f.load(path, dst)
}

// load decodes one image and writes it resized into dst.
func (f *ImageFolder) load(path string, dst []float32) error {
	r, err := os.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := decodeImage(r, dst, f.height, f.width, f.channels, f.crop, f.nearest); err != nil {
		return fmt.Errorf("decoding %s: %w", path, err)
	}
	return nil
}

// DecodeImage decodes a BMP, GIF, JPEG or PNG image from r and writes it
// into dst resized to height × width (bilinear, as TensorFlow's resize
// without antialiasing) with channels 1 (grayscale), 3 (RGB) or 4 (RGBA),
// as float32 values in [0, 255]: the pixels ImageDatasetFromDirectory
// gives, for a Stream's Map over images held elsewhere (in memory, in an
// archive), as tf.io.decode_image and tf.image.resize in a tf.data map.
// dst must hold height·width·channels values.
func DecodeImage(r io.Reader, dst []float32, height, width, channels int) error {
	switch {
	case height <= 0 || width <= 0:
		return fmt.Errorf("data.DecodeImage: size %d×%d: give a positive height and width", height, width)
	case channels != 1 && channels != 3 && channels != 4:
		return fmt.Errorf("data.DecodeImage: %d channels: give 1, 3 or 4", channels)
	case len(dst) != height*width*channels:
		return fmt.Errorf("data.DecodeImage: dst holds %d values, want %d×%d×%d = %d", len(dst), height, width, channels, height*width*channels)
	}
	if err := decodeImage(r, dst, height, width, channels, false, false); err != nil {
		return fmt.Errorf("data.DecodeImage: %w", err)
	}
	return nil
}

// decodeImage decodes an image and writes it resized into dst, its
// center cropped to the aspect ratio first when crop is set.
func decodeImage(r io.Reader, dst []float32, height, width, channels int, crop, nearest bool) error {
	img, _, err := image.Decode(r)
	if err != nil {
		return err
	}
	b := img.Bounds()
	if crop {
		b = cropToAspect(b, height, width)
	}
	src := pixels(img, b, channels)
	resize(src, b.Dy(), b.Dx(), channels, dst, height, width, nearest)
	return nil
}

// cropToAspect is the largest rectangle of b's center with the aspect
// ratio of height×width, as Keras' crop_to_aspect_ratio crops.
func cropToAspect(b image.Rectangle, height, width int) image.Rectangle {
	w, h := b.Dx(), b.Dy()
	cw := max(1, min(w, int(float64(h)*float64(width)/float64(height))))
	ch := max(1, min(h, int(float64(w)*float64(height)/float64(width))))
	x0, y0 := b.Min.X+(w-cw)/2, b.Min.Y+(h-ch)/2
	return image.Rect(x0, y0, x0+cw, y0+ch)
}

// pixels are the rows of b in img as float32 channels in [0, 255], the
// colors unpremultiplied (as PNG stores them): grayscale with
// color.GrayModel's weights (ITU-R BT.601), RGB without alpha, RGBA.
func pixels(img image.Image, b image.Rectangle, channels int) []float32 {
	out := make([]float32, 0, b.Dx()*b.Dy()*channels)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := img.At(x, y)
			switch channels {
			case 1:
				// color.GrayModel's weights, on the colors before any
				// alpha: a PNG's stored values, as decoders drop alpha.
				n := color.NRGBAModel.Convert(c).(color.NRGBA)
				y := (19595*uint32(n.R) + 38470*uint32(n.G) + 7471*uint32(n.B) + 1<<15) >> 16
				out = append(out, float32(y))
			case 3:
				n := color.NRGBAModel.Convert(c).(color.NRGBA)
				out = append(out, float32(n.R), float32(n.G), float32(n.B))
			default:
				n := color.NRGBAModel.Convert(c).(color.NRGBA)
				out = append(out, float32(n.R), float32(n.G), float32(n.B), float32(n.A))
			}
		}
	}
	return out
}

// resize writes src (inH×inW×channels) resized to outH×outW into dst as
// TensorFlow's resize does without antialiasing: half-pixel centers,
// bilinear weights between the two nearest rows and columns (clamped at
// the edges), or the nearest pixel.
func resize(src []float32, inH, inW, channels int, dst []float32, outH, outW int, nearest bool) {
	sy, sx := float64(inH)/float64(outH), float64(inW)/float64(outW)
	if nearest {
		for y := range outH {
			iy := min(int(math.Floor((float64(y)+0.5)*sy)), inH-1)
			for x := range outW {
				ix := min(int(math.Floor((float64(x)+0.5)*sx)), inW-1)
				copy(dst[(y*outW+x)*channels:(y*outW+x+1)*channels], src[(iy*inW+ix)*channels:(iy*inW+ix+1)*channels])
			}
		}
		return
	}
	type weight struct {
		lo, hi int
		frac   float32
	}
	weights := func(out, in int, scale float64) []weight {
		ws := make([]weight, out)
		for i := range ws {
			v := (float64(i)+0.5)*scale - 0.5
			fl := math.Floor(v)
			ws[i] = weight{lo: max(int(fl), 0), hi: min(int(math.Ceil(v)), in-1), frac: float32(v - fl)}
		}
		return ws
	}
	ys, xs := weights(outH, inH, sy), weights(outW, inW, sx)
	for y, wy := range ys {
		top, bottom := src[wy.lo*inW*channels:], src[wy.hi*inW*channels:]
		for x, wx := range xs {
			for c := range channels {
				tl, tr := top[wx.lo*channels+c], top[wx.hi*channels+c]
				bl, br := bottom[wx.lo*channels+c], bottom[wx.hi*channels+c]
				t := tl + (tr-tl)*wx.frac
				b := bl + (br-bl)*wx.frac
				dst[(y*outW+x)*channels+c] = t + (b-t)*wy.frac
			}
		}
	}
}
