package data

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gokeras/gokeras/internal/formats/shapes"
)

// Samples are a model's inputs given as plain Go values, the x of Keras'
// fit(x, y). Make them with Rows, Flat or Pixels and hand them to SliceData
// (with Labels) or SliceInputs (for Predict); InputTuple joins the samples
// of a model's several inputs. The constructors check what
// they are given and keep the first mistake, which SliceData and
// SliceInputs return, so that a program checks one error per dataset.
// NaN and infinities are taken as they are, as TensorData takes them.
type Samples struct {
	n      int
	shape  []int         // one sample's shape
	values []float32     // n·shapes.Size(shape) values, unless bytes is set
	bytes  []uint8       // n·shapes.Size(shape) bytes, converted per batch by table
	table  *[256]float32 // what each byte becomes
	parts  []Samples     // an InputTuple's parts, each of one part; nil otherwise
	sizes  []int         // the parts' values per sample
	err    error         // the constructor's first complaint
	made   bool          // false for the zero Samples
}

// Labels are the targets given as plain Go values, the y of Keras'
// fit(x, y): class indices (Classes), one-hot rows (OneHot) or numbers
// (Targets, TargetRows); LabelTuple joins the labels of a model's several
// outputs. Like Samples, they keep the first mistake their constructor
// finds, and SliceData returns it.
type Labels struct {
	n       int
	shape   []int     // one label's shape
	values  []float32 // n·shapes.Size(shape) values, unless oneHot > 0
	classes []int32   // the class of each sample, for one-hot labels
	oneHot  int       // the number of classes of one-hot labels; 0 otherwise
	parts   []Labels  // a LabelTuple's parts, each of one part; nil otherwise
	sizes   []int     // the parts' values per label
	err     error
	made    bool
}

// maxExactClass is the largest class count whose indices float32 holds
// exactly: labels reach the graph as float32.
const maxExactClass = 1 << 24

// Rows makes Samples of rows, one sample of len(rows[0]) values per row,
// like a 2-D array given to Keras. The values are copied as float32; a
// ragged or empty row, or a float64 too large for float32, is an error that
// names its row.
func Rows[T ~float32 | ~float64](rows [][]T) Samples {
	values, width, err := rowsOf("data.Rows", rows)
	if err != nil {
		return Samples{made: true, err: err}
	}
	return Samples{made: true, n: len(rows), shape: []int{width}, values: values}
}

// rowsOf flattens rows of one length into float32 values.
func rowsOf[T ~float32 | ~float64](from string, rows [][]T) ([]float32, int, error) {
	if len(rows) == 0 {
		return nil, 0, fmt.Errorf("%s: no rows given: a dataset needs at least one sample", from)
	}
	width := len(rows[0])
	if width == 0 {
		return nil, 0, fmt.Errorf("%s: row 0 is empty: a sample needs at least one value", from)
	}
	values := make([]float32, 0, len(rows)*width)
	for i, row := range rows {
		if len(row) != width {
			return nil, 0, fmt.Errorf("%s: row %d has length %d but row 0 has length %d: every row must have the same length", from, i, len(row), width)
		}
		for j, v := range row {
			f, ok := toFloat32(v)
			if !ok {
				return nil, 0, fmt.Errorf("%s: row %d, column %d: %v is too large for float32, which models compute in", from, i, j, float64(v))
			}
			values = append(values, f)
		}
	}
	return values, width, nil
}

// Flat makes Samples of values laid out sample after sample, each of the
// given shape in row-major order, like a NumPy array of shape
// (N, sampleShape...): Flat(x, 28, 28) reads len(x)/784 images of 28×28.
// A []float32 is read in place, so it must not change while the data is in
// use; other types are copied as float32. A shape that does not divide the
// values into whole samples is an error.
func Flat[T ~float32 | ~float64](values []T, sampleShape ...int) Samples {
	s := Samples{made: true}
	size, err := checkSampleShape("data.Flat", len(values), sampleShape)
	if err != nil {
		s.err = err
		return s
	}
	if f32, ok := any(values).([]float32); ok {
		s.values = f32
	} else {
		s.values = make([]float32, len(values))
		for i, v := range values {
			f, ok := toFloat32(v)
			if !ok {
				s.err = fmt.Errorf("data.Flat: value %d (sample %d): %v is too large for float32, which models compute in", i, i/size, float64(v))
				return s
			}
			s.values[i] = f
		}
	}
	s.n, s.shape = len(values)/size, append([]int(nil), sampleShape...)
	return s
}

// Pixels makes Samples of bytes, laid out as for Flat, that stay bytes in
// memory and become float32(v)/divisor as each batch is gathered: divisor
// 255 scales pixels to [0, 1] exactly as Keras' x / 255 does (and as
// datasets/cifar10 does), divisor 1 keeps 0..255. The bytes are read in
// place, so they must not change while the data is in use.
func Pixels(values []uint8, divisor float32, sampleShape ...int) Samples {
	s := Samples{made: true}
	if divisor == 0 || math.IsNaN(float64(divisor)) || math.IsInf(float64(divisor), 0) {
		s.err = fmt.Errorf("data.Pixels: divisor %v: want a finite number other than 0, such as 255 to scale bytes to [0, 1]", divisor)
		return s
	}
	size, err := checkSampleShape("data.Pixels", len(values), sampleShape)
	if err != nil {
		s.err = err
		return s
	}
	table := new([256]float32)
	for v := range table {
		table[v] = float32(v) / divisor
	}
	s.n, s.shape, s.bytes, s.table = len(values)/size, append([]int(nil), sampleShape...), values, table
	return s
}

// checkSampleShape checks that a sample shape divides count values into
// whole samples and returns the values per sample.
func checkSampleShape(from string, count int, shape []int) (int, error) {
	if len(shape) == 0 {
		return 0, fmt.Errorf("%s: no sample shape given: say what one sample is, e.g. %s(x, 28, 28) for 28×28 images", from, from)
	}
	for _, d := range shape {
		if d <= 0 {
			return 0, fmt.Errorf("%s: sample shape %s has a dimension %d: every dimension must be positive", from, tuple(shape), d)
		}
	}
	size := shapes.Size(shape)
	if count == 0 {
		return 0, fmt.Errorf("%s: no values given: a dataset needs at least one sample", from)
	}
	if count%size != 0 {
		return 0, fmt.Errorf("%s: %d values do not make whole samples of shape %s (%d values each): %d would be left over",
			from, count, tuple(shape), size, count%size)
	}
	return size, nil
}

// tuple writes a shape as Python writes a tuple: (3,), (28, 28).
func tuple(shape []int) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = strconv.Itoa(d)
	}
	if len(shape) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// toFloat32 converts v to float32 and reports false when a finite v is too
// large for float32. NaN and infinities pass as they are: nn does not
// refuse them in data (TensorData does not), and a loss they make NaN stops
// Fit with ErrNonFiniteLoss.
func toFloat32[T ~float32 | ~float64](v T) (float32, bool) {
	f := float32(v)
	if math.IsInf(float64(f), 0) && !math.IsInf(float64(v), 0) {
		return 0, false
	}
	return f, true
}

// Classes makes Labels of class indices, one per sample, for
// sparse_categorical_crossentropy (and the binary losses, with classes 2):
// like Keras' y of shape (N,), each label has shape () and is one of 0 ..
// classes-1. A label outside that range is an error naming its sample.
func Classes[I ~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64](y []I, classes int) Labels {
	l := Labels{made: true}
	cls, err := checkClasses("data.Classes", y, classes)
	if err != nil {
		l.err = err
		return l
	}
	l.n, l.shape, l.values = len(y), []int{}, make([]float32, len(y))
	for i, c := range cls {
		l.values[i] = float32(c)
	}
	return l
}

// OneHot makes Labels of class indices written as one-hot rows of width
// classes, for categorical_crossentropy, as keras.utils.to_categorical(y,
// classes) writes them. Only the indices are kept; each batch's rows are
// written as it is gathered. A label outside 0 .. classes-1 is an error
// naming its sample.
func OneHot[I ~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64](y []I, classes int) Labels {
	l := Labels{made: true}
	cls, err := checkClasses("data.OneHot", y, classes)
	if err != nil {
		l.err = err
		return l
	}
	l.n, l.shape, l.classes, l.oneHot = len(y), []int{classes}, cls, classes
	return l
}

// checkClasses checks class indices against a class count and returns them
// as int32.
func checkClasses[I ~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64](from string, y []I, classes int) ([]int32, error) {
	if classes <= 0 || classes > maxExactClass {
		return nil, fmt.Errorf("%s: %d classes: want 1 to %d", from, classes, maxExactClass)
	}
	if len(y) == 0 {
		return nil, fmt.Errorf("%s: no labels given: a dataset needs at least one sample", from)
	}
	out := make([]int32, len(y))
	for i, c := range y {
		// Compared as unsigned after the sign test, so that no conversion of
		// a huge uint64 wraps into the range.
		if c < 0 || uint64(c) >= uint64(classes) {
			return nil, fmt.Errorf("%s: sample %d has class %v, outside the %d classes 0 to %d", from, i, c, classes, classes-1)
		}
		out[i] = int32(c)
	}
	return out, nil
}

// Targets makes Labels of one number per sample, shape () like Keras' y of
// shape (N,): regression targets, or 0/1 labels for binary_crossentropy.
// The values are copied as float32.
func Targets[T ~float32 | ~float64](y []T) Labels {
	l := Labels{made: true}
	if len(y) == 0 {
		l.err = errors.New("data.Targets: no labels given: a dataset needs at least one sample")
		return l
	}
	values := make([]float32, len(y))
	for i, v := range y {
		f, ok := toFloat32(v)
		if !ok {
			l.err = fmt.Errorf("data.Targets: sample %d: %v is too large for float32, which models compute in", i, float64(v))
			return l
		}
		values[i] = f
	}
	l.n, l.shape, l.values = len(y), []int{}, values
	return l
}

// TargetRows makes Labels of one row of numbers per sample, shape
// (len(rows[0])): multi-output regression, multi-label 0/1 rows, or labels
// already one-hot. The values are copied as float32; a ragged row is an
// error naming it.
func TargetRows[T ~float32 | ~float64](rows [][]T) Labels {
	values, width, err := rowsOf("data.TargetRows", rows)
	if err != nil {
		return Labels{made: true, err: err}
	}
	return Labels{made: true, n: len(rows), shape: []int{width}, values: values}
}

// SliceData makes a Dataset of Samples and Labels, one label per sample,
// like the arrays given to Keras' fit(x, y):
//
//	ds, err := data.SliceData(data.Rows(x), data.Classes(y, 10))
//
// For a model of several inputs or outputs, x is an InputTuple and y a
// LabelTuple, as Keras' fit takes lists of arrays:
//
//	ds, err := data.SliceData(
//		data.InputTuple(data.Pixels(images, 255, 28, 28), data.Rows(features)),
//		data.LabelTuple(data.Classes(digits, 10), data.Targets(angles)))
//
// It returns the first mistake the constructors found, or a count of
// labels that differs from the count of samples.
func SliceData(x Samples, y Labels) (Dataset, error) {
	in, err := sliceInputsOf(x)
	if err != nil {
		return nil, err
	}
	switch {
	case !y.made:
		return nil, errors.New("data.SliceData: no labels: make them with Classes, OneHot, Targets or TargetRows")
	case y.err != nil:
		return nil, y.err
	case y.n != x.n:
		return nil, fmt.Errorf("data.SliceData: %d samples but %d labels: give one label per sample", x.n, y.n)
	}
	return &sliceData{sliceInputs: in, y: y}, nil
}

// SliceInputs makes Inputs of Samples, for Predict and PredictValues. It
// returns the first mistake the constructor found. (A Dataset is Inputs
// too: predicting on the data trained on needs no SliceInputs.)
func SliceInputs(x Samples) (Inputs, error) {
	in, err := sliceInputsOf(x)
	if err != nil {
		return nil, err
	}
	return in, nil
}

func sliceInputsOf(x Samples) (*sliceInputs, error) {
	switch {
	case !x.made:
		return nil, errors.New("nn: no samples: make them with Rows, Flat or Pixels")
	case x.err != nil:
		return nil, x.err
	}
	return &sliceInputs{x: x, size: shapes.Size(x.shape)}, nil
}

// sliceInputs is Inputs of Samples.
type sliceInputs struct {
	x    Samples
	size int // values per sample
}

func (s *sliceInputs) Len() int            { return s.x.n }
func (s *sliceInputs) SampleShape() []int  { return append([]int(nil), s.x.shape...) }
func (s *sliceInputs) InputParts() [][]int { return s.x.partShapes() }

func (s *sliceInputs) GatherInputs(indices []int, dst []float32) error {
	if err := checkGather(indices, dst, s.x.n, s.size); err != nil {
		return err
	}
	size := s.size
	for i, idx := range indices {
		s.x.write(idx, dst[i*size:(i+1)*size])
	}
	return nil
}

// write writes sample idx into out, which holds one sample's values: an
// InputTuple's parts one after another.
func (s *Samples) write(idx int, out []float32) {
	if s.parts != nil {
		for k := range s.parts {
			size := s.sizes[k]
			s.parts[k].write(idx, out[:size])
			out = out[size:]
		}
		return
	}
	size := len(out)
	if s.bytes == nil {
		copy(out, s.values[idx*size:(idx+1)*size])
		return
	}
	for j, b := range s.bytes[idx*size : (idx+1)*size] {
		out[j] = s.table[b]
	}
}

// partShapes is what InputParts returns: the parts' shapes, nil for one part.
func (s *Samples) partShapes() [][]int {
	if len(s.parts) < 2 {
		return nil
	}
	shapes := make([][]int, len(s.parts))
	for k := range s.parts {
		shapes[k] = append([]int{}, s.parts[k].shape...)
	}
	return shapes
}

// checkGather checks a gather's destination and indices.
func checkGather(indices []int, dst []float32, n, size int) error {
	if len(dst) != len(indices)*size {
		return fmt.Errorf("gather: destination holds %d values, want %d", len(dst), len(indices)*size)
	}
	for _, idx := range indices {
		if idx < 0 || idx >= n {
			return fmt.Errorf("gather: sample index %d out of range [0, %d)", idx, n)
		}
	}
	return nil
}

// sliceData is a Dataset of Samples and Labels.
type sliceData struct {
	*sliceInputs
	y Labels
}

func (s *sliceData) LabelShape() []int   { return append([]int(nil), s.y.shape...) }
func (s *sliceData) LabelParts() [][]int { return s.y.partShapes() }

func (s *sliceData) GatherLabels(indices []int, dst []float32) error {
	size := shapes.Size(s.y.shape)
	if err := checkGather(indices, dst, s.y.n, size); err != nil {
		return err
	}
	for i, idx := range indices {
		s.y.write(idx, dst[i*size:(i+1)*size])
	}
	return nil
}

// write writes label idx into out, which holds one label's values: a
// LabelTuple's parts one after another, one-hot labels as their rows.
func (l *Labels) write(idx int, out []float32) {
	switch {
	case l.parts != nil:
		for k := range l.parts {
			size := l.sizes[k]
			l.parts[k].write(idx, out[:size])
			out = out[size:]
		}
	case l.oneHot > 0:
		clear(out)
		out[l.classes[idx]] = 1
	default:
		size := len(out)
		copy(out, l.values[idx*size:(idx+1)*size])
	}
}

// partShapes is what LabelParts returns: the parts' shapes, nil for one part.
func (l *Labels) partShapes() [][]int {
	if len(l.parts) < 2 {
		return nil
	}
	shapes := make([][]int, len(l.parts))
	for k := range l.parts {
		shapes[k] = append([]int{}, l.parts[k].shape...)
	}
	return shapes
}
