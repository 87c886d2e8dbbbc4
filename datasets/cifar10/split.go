package cifar10

import "fmt"

// Geometry of one CIFAR-10 image and of one record in a binary batch file.
const (
	Height     = 32                        // image rows
	Width      = 32                        // image columns
	Channels   = 3                         // red, green, blue
	NumClasses = 10                        // labels are 0..NumClasses-1
	ImageSize  = Height * Width * Channels // bytes (or floats) per image: 3072
	RecordSize = 1 + ImageSize             // bytes per record in a .bin file: 3073
)

// Split is one part of CIFAR-10 (train or test), kept as uint8 like
// keras.datasets.cifar10 keeps it.
//
// Images holds Len() images back to back, each 32×32×3 in channels-last (HWC)
// row-major order: the byte for image n, row r, column c and channel ch is
// Images[((n*32+r)*32+c)*3+ch]. Labels holds one class index 0..9 per image.
type Split struct {
	Images []uint8 // Len()×32×32×3, HWC
	Labels []uint8 // Len(), each 0..9
}

// Len returns the number of samples in the split.
func (s *Split) Len() int { return len(s.Labels) }

// SampleShape returns the shape of one input sample, []int{32, 32, 3}.
// The caller owns the returned slice.
func (s *Split) SampleShape() []int { return []int{Height, Width, Channels} }

// GatherInputs writes the images at indices into dst as float32 pixels scaled
// to [0, 1] (pixel/255), in HWC order, one image after another.
// dst must hold exactly len(indices)*3072 floats. Only the requested images
// are converted, so a batch never costs a float copy of the whole split.
func (s *Split) GatherInputs(indices []int, dst []float32) error {
	if err := s.check(); err != nil {
		return err
	}
	if want := len(indices) * ImageSize; len(dst) != want {
		return fmt.Errorf("cifar10: GatherInputs: dst has %d floats, want %d (%d indices × %d)",
			len(dst), want, len(indices), ImageSize)
	}
	if err := checkIndices("GatherInputs", indices, s.Len()); err != nil {
		return err
	}
	for i, idx := range indices {
		Scale(dst[i*ImageSize:(i+1)*ImageSize], s.Images[idx*ImageSize:(idx+1)*ImageSize])
	}
	return nil
}

// OneHot returns a view of the split whose labels are one-hot rows of ten
// float32 values, as keras.utils.to_categorical(y, 10) makes them.
func (s *Split) OneHot() *Labelled { return &Labelled{split: s, oneHot: true} }

// Sparse returns a view of the split whose label is the class index as a
// single float32 (LabelShape []int{1}), like Keras' y_train of shape (N, 1),
// for sparse categorical cross-entropy.
func (s *Split) Sparse() *Labelled { return &Labelled{split: s} }

// check reports a Split whose slices disagree in length, which can only come
// from a caller building one by hand.
func (s *Split) check() error {
	if len(s.Images) != len(s.Labels)*ImageSize {
		return fmt.Errorf("cifar10: malformed Split: %d image bytes for %d labels, want %d",
			len(s.Images), len(s.Labels), len(s.Labels)*ImageSize)
	}
	return nil
}

func checkIndices(op string, indices []int, n int) error {
	for i, idx := range indices {
		if idx < 0 || idx >= n {
			return fmt.Errorf("cifar10: %s: indices[%d] = %d is out of range [0, %d)", op, i, idx, n)
		}
	}
	return nil
}

// Labelled is a Split seen with a particular label encoding; make one with
// Split.OneHot or Split.Sparse. It reads the Split's data in place.
type Labelled struct {
	split  *Split
	oneHot bool
}

// Split returns the split the view reads from.
func (l *Labelled) Split() *Split { return l.split }

// Len returns the number of samples.
func (l *Labelled) Len() int { return l.split.Len() }

// SampleShape returns []int{32, 32, 3}.
func (l *Labelled) SampleShape() []int { return l.split.SampleShape() }

// GatherInputs is Split.GatherInputs.
func (l *Labelled) GatherInputs(indices []int, dst []float32) error {
	return l.split.GatherInputs(indices, dst)
}

// LabelShape returns the shape of one label: []int{10} for one-hot views,
// []int{1} for sparse ones.
func (l *Labelled) LabelShape() []int {
	if l.oneHot {
		return []int{NumClasses}
	}
	return []int{1}
}

// GatherLabels writes the labels at indices into dst in the view's encoding:
// len(indices)*10 floats for one-hot views, len(indices) for sparse ones.
func (l *Labelled) GatherLabels(indices []int, dst []float32) error {
	width := 1
	if l.oneHot {
		width = NumClasses
	}
	if want := len(indices) * width; len(dst) != want {
		return fmt.Errorf("cifar10: GatherLabels: dst has %d floats, want %d (%d indices × %d)",
			len(dst), want, len(indices), width)
	}
	labels := l.split.Labels
	if err := checkIndices("GatherLabels", indices, len(labels)); err != nil {
		return err
	}
	if !l.oneHot {
		for i, idx := range indices {
			dst[i] = float32(labels[idx])
		}
		return nil
	}
	clear(dst)
	for i, idx := range indices {
		label := int(labels[idx])
		if label >= NumClasses {
			return fmt.Errorf("cifar10: GatherLabels: sample %d has label %d, want 0..%d", idx, label, NumClasses-1)
		}
		dst[i*NumClasses+label] = 1
	}
	return nil
}

// Scale converts pixels to float32 in [0, 1]: dst[i] = src[i]/255. Like copy,
// it converts min(len(dst), len(src)) values.
func Scale(dst []float32, src []uint8) {
	n := min(len(dst), len(src))
	dst, src = dst[:n], src[:n]
	if n < 1024 {
		for i, v := range src {
			dst[i] = float32(v) / 255
		}
		return
	}
	// A table lookup is several times faster than a division per pixel and
	// gives bit-identical results.
	var table [256]float32
	for v := range table {
		table[v] = float32(v) / 255
	}
	for i, v := range src {
		dst[i] = table[v]
	}
}

// OneHotEncode writes labels as one-hot rows of width classes into dst, like
// keras.utils.to_categorical. dst must hold exactly len(labels)*classes
// floats; it is cleared first. A label outside [0, classes) is an error.
func OneHotEncode(dst []float32, labels []uint8, classes int) error {
	if classes <= 0 {
		return fmt.Errorf("cifar10: OneHotEncode: classes = %d, want > 0", classes)
	}
	if want := len(labels) * classes; len(dst) != want {
		return fmt.Errorf("cifar10: OneHotEncode: dst has %d floats, want %d (%d labels × %d classes)",
			len(dst), want, len(labels), classes)
	}
	clear(dst)
	for i, label := range labels {
		if int(label) >= classes {
			return fmt.Errorf("cifar10: OneHotEncode: labels[%d] = %d, want 0..%d", i, label, classes-1)
		}
		dst[i*classes+int(label)] = 1
	}
	return nil
}

// Dataset is CIFAR-10: the 50,000-image training split, the 10,000-image test
// split and the names of the ten classes, indexed by label.
type Dataset struct {
	Train, Test Split
	ClassNames  []string // from batches.meta.txt: airplane, automobile, ..., truck
}
