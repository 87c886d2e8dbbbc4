package layers

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/gokeras/gokeras/internal/formats/configargs"
	"github.com/gokeras/gokeras/internal/formats/shapes"
	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
)

// ZeroPadding2DLayer adds rows and columns of zeros around images, channels
// last, like keras.layers.ZeroPadding2D: (None, h, w, c) becomes
// (None, top+h+bottom, left+w+right, c).
type ZeroPadding2DLayer struct {
	named
	sides
}

// ZeroPadding2D pads images with top and bottom rows and left and right
// columns of zeros, Keras' ZeroPadding2D(padding=((top, bottom), (left,
// right))).
func ZeroPadding2D(top, bottom, left, right int, opts ...Option) *ZeroPadding2DLayer {
	l := &ZeroPadding2DLayer{sides: newSides("padding", top, bottom, left, right)}
	applyOptions(&l.named, opts)
	return l
}

// ZeroPadding2DSymmetric pads images with h rows of zeros above and below
// and w columns left and right, Keras' ZeroPadding2D(padding=(h, w));
// ZeroPadding2DSymmetric(1, 1) is Keras' default, ZeroPadding2D().
func ZeroPadding2DSymmetric(h, w int, opts ...Option) *ZeroPadding2DLayer {
	return ZeroPadding2D(h, h, w, w, opts...)
}

// Cropping2DLayer crops rows and columns off images, channels last, like
// keras.layers.Cropping2D: (None, h, w, c) becomes (None, h-top-bottom,
// w-left-right, c).
type Cropping2DLayer struct {
	named
	sides
}

// Cropping2D crops top and bottom rows and left and right columns off
// images, Keras' Cropping2D(cropping=((top, bottom), (left, right))).
func Cropping2D(top, bottom, left, right int, opts ...Option) *Cropping2DLayer {
	l := &Cropping2DLayer{sides: newSides("cropping", top, bottom, left, right)}
	applyOptions(&l.named, opts)
	return l
}

// Cropping2DSymmetric crops h rows off the top and the bottom of images
// and w columns off each side, Keras' Cropping2D(cropping=(h, w)).
func Cropping2DSymmetric(h, w int, opts ...Option) *Cropping2DLayer {
	return Cropping2D(h, h, w, w, opts...)
}

// sides are a ZeroPadding2D's or Cropping2D's rows and columns: top,
// bottom, left and right, and the error of a negative one.
type sides struct {
	top, bottom, left, right int
	err                      error
	in                       [3]int // the input images, when built
}

func newSides(arg string, top, bottom, left, right int) sides {
	s := sides{top: top, bottom: bottom, left: left, right: right}
	if top < 0 || bottom < 0 || left < 0 || right < 0 {
		s.err = fmt.Errorf("%s ((%d, %d), (%d, %d)): every value must be 0 or more", arg, top, bottom, left, right)
	}
	return s
}

// pairs is Keras' normalized form of the sides, ((top, bottom), (left,
// right)).
func (s sides) pairs() [][]int { return [][]int{{s.top, s.bottom}, {s.left, s.right}} }

// images reads a sample shape as images (height, width, channels).
func images(what string, inputShape []int) ([3]int, error) {
	if len(inputShape) != 3 {
		return [3]int{}, fmt.Errorf("%s: expects images (height, width, channels), channels last, but gets %s", what, shapes.String(inputShape))
	}
	for _, d := range inputShape {
		if d <= 0 {
			return [3]int{}, fmt.Errorf("%s: input shape %s has a non-positive dimension", what, shapes.String(inputShape))
		}
	}
	return [3]int(inputShape), nil
}

// buildImages is the Build of a layer of images without weights: check
// its arguments, then the input shape against its shape rule (plan), and
// keep the input's image shape in in.
func buildImages(check func() error, plan func([]int) ([]int, []WeightShape, error), in *[3]int, inputShape []int) ([]int, error) {
	if err := check(); err != nil {
		return nil, err
	}
	out, _, err := plan(inputShape)
	if err != nil {
		return nil, err
	}
	*in = [3]int(inputShape)
	return out, nil
}

// imageNode returns a Flow's value as images (batch, h, w, c).
func imageNode(in Flow, img [3]int) (*gorgonia.Node, error) {
	if in.Node.Dims() == 4 {
		return in.Node, nil
	}
	return ops.Reshape(in.Node, []int{in.Node.Shape()[0], img[0], img[1], img[2]}, in.NeedsGrad)
}

// Type returns "ZeroPadding2D".
func (l *ZeroPadding2DLayer) Type() string { return "ZeroPadding2D" }

// CheckConfig checks the layer's name and padding.
func (l *ZeroPadding2DLayer) CheckConfig() error {
	if l.nameErr != nil {
		return fmt.Errorf("ZeroPadding2D layer: %w", l.nameErr)
	}
	if l.err != nil {
		return fmt.Errorf("ZeroPadding2D layer %q: %w", l.name, l.err)
	}
	return nil
}

// plan is ZeroPadding2D's shape rule: the images padded; no weights.
func (l *ZeroPadding2DLayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	img, err := images(fmt.Sprintf("ZeroPadding2D layer %q", l.name), inputShape)
	if err != nil {
		return nil, nil, err
	}
	return []int{img[0] + l.top + l.bottom, img[1] + l.left + l.right, img[2]}, nil, nil
}

// Build checks the input shape and returns the padded shape.
func (l *ZeroPadding2DLayer) Build(inputShape []int, _ *rand.Rand) ([]int, error) {
	return buildImages(l.CheckConfig, l.plan, &l.in, inputShape)
}

// Params returns nil: ZeroPadding2D has no weights.
func (l *ZeroPadding2DLayer) Params() []*Param { return nil }

// Call adds the padding to the graph (ops.Pad2D).
func (l *ZeroPadding2DLayer) Call(in Flow, _ []*gorgonia.Node) (Flow, error) {
	x, err := imageNode(in, l.in)
	if err == nil {
		x, err = ops.Pad2D(x, l.top, l.bottom, l.left, l.right)
	}
	if err != nil {
		return Flow{}, fmt.Errorf("ZeroPadding2D layer %q: %w", l.name, err)
	}
	return Flow{Node: x, NeedsGrad: in.NeedsGrad}, nil
}

// Config returns "ZeroPadding2D" with name, padding as Keras normalizes
// it, ((top, bottom), (left, right)), and data_format "channels_last".
func (l *ZeroPadding2DLayer) Config() (Config, error) {
	return Config{ClassName: l.Type(), Config: map[string]any{"name": l.name, "padding": l.pairs(), "data_format": "channels_last"}}, nil
}

func zeroPaddingFromConfig(args map[string]any) (Layer, error) {
	a := struct {
		baseArgs
		Padding    json.RawMessage `json:"padding"`
		DataFormat *string         `json:"data_format"`
	}{}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	if err := channelsLast(a.DataFormat); err != nil {
		return nil, err
	}
	p := [4]int{1, 1, 1, 1}
	if len(a.Padding) > 0 {
		var err error
		if p, err = sidesArg("padding", a.Padding); err != nil {
			return nil, err
		}
	}
	return ZeroPadding2D(p[0], p[1], p[2], p[3], a.nameOptions()...), nil
}

// ONNX adds ONNX's Pad (constant zeros) to the graph, in the layout its
// input has.
func (l *ZeroPadding2DLayer) ONNX(b ONNXGraph, in string) (string, error) {
	t, bo, le, r := int64(l.top), int64(l.bottom), int64(l.left), int64(l.right)
	pads := []int64{0, t, le, 0, 0, bo, r, 0} // (batch, h, w, c): begins, then ends
	if b.IsChannelsFirst(in) {
		pads = []int64{0, 0, t, le, 0, 0, bo, r}
	}
	return b.Apply("Pad", in, []string{b.Int64s("pads", pads...)}), nil
}

// Type returns "Cropping2D".
func (l *Cropping2DLayer) Type() string { return "Cropping2D" }

// CheckConfig checks the layer's name and cropping.
func (l *Cropping2DLayer) CheckConfig() error {
	if l.nameErr != nil {
		return fmt.Errorf("Cropping2D layer: %w", l.nameErr)
	}
	if l.err != nil {
		return fmt.Errorf("Cropping2D layer %q: %w", l.name, l.err)
	}
	return nil
}

// plan is Cropping2D's shape rule: the images cropped, at least a row
// and a column left; no weights.
func (l *Cropping2DLayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	what := fmt.Sprintf("Cropping2D layer %q", l.name)
	img, err := images(what, inputShape)
	if err != nil {
		return nil, nil, err
	}
	h, w := img[0]-l.top-l.bottom, img[1]-l.left-l.right
	if h <= 0 || w <= 0 {
		return nil, nil, fmt.Errorf("%s: cropping ((%d, %d), (%d, %d)) is too high for input shape %s: it leaves %d×%d pixels; at least one row and one column must remain",
			what, l.top, l.bottom, l.left, l.right, shapes.String(inputShape), h, w)
	}
	return []int{h, w, img[2]}, nil, nil
}

// Build checks the input shape and returns the cropped shape.
func (l *Cropping2DLayer) Build(inputShape []int, _ *rand.Rand) ([]int, error) {
	return buildImages(l.CheckConfig, l.plan, &l.in, inputShape)
}

// Params returns nil: Cropping2D has no weights.
func (l *Cropping2DLayer) Params() []*Param { return nil }

// Call adds the crop to the graph (ops.Crop2D).
func (l *Cropping2DLayer) Call(in Flow, _ []*gorgonia.Node) (Flow, error) {
	x, err := imageNode(in, l.in)
	if err == nil {
		x, err = ops.Crop2D(x, l.top, l.bottom, l.left, l.right)
	}
	if err != nil {
		return Flow{}, fmt.Errorf("Cropping2D layer %q: %w", l.name, err)
	}
	return Flow{Node: x, NeedsGrad: in.NeedsGrad}, nil
}

// Config returns "Cropping2D" with name, cropping as Keras normalizes it,
// ((top, bottom), (left, right)), and data_format "channels_last".
func (l *Cropping2DLayer) Config() (Config, error) {
	return Config{ClassName: l.Type(), Config: map[string]any{"name": l.name, "cropping": l.pairs(), "data_format": "channels_last"}}, nil
}

func croppingFromConfig(args map[string]any) (Layer, error) {
	a := struct {
		baseArgs
		Cropping   json.RawMessage `json:"cropping"`
		DataFormat *string         `json:"data_format"`
	}{}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	if err := channelsLast(a.DataFormat); err != nil {
		return nil, err
	}
	var c [4]int // Keras' default: ((0, 0), (0, 0))
	if len(a.Cropping) > 0 {
		var err error
		if c, err = sidesArg("cropping", a.Cropping); err != nil {
			return nil, err
		}
	}
	return Cropping2D(c[0], c[1], c[2], c[3], a.nameOptions()...), nil
}

// ONNX adds ONNX's Slice of the rows and columns left to the graph, in
// the layout its input has.
func (l *Cropping2DLayer) ONNX(b ONNXGraph, in string) (string, error) {
	s := b.InputShape()
	if len(s) != 3 {
		return "", fmt.Errorf("Cropping2D layer %q: input shape %s: want images (height, width, channels)", l.name, shapes.String(s))
	}
	axes := []int64{1, 2}
	if b.IsChannelsFirst(in) {
		axes = []int64{2, 3}
	}
	starts := b.Int64s("starts", int64(l.top), int64(l.left))
	ends := b.Int64s("ends", int64(s[0]-l.bottom), int64(s[1]-l.right))
	return b.Apply("Slice", in, []string{starts, ends, b.Int64s("axes", axes...)}), nil
}

// UpSampling2DLayer repeats each pixel of images, channels last, like
// keras.layers.UpSampling2D with interpolation "nearest": (None, h, w, c)
// becomes (None, h·sizeH, w·sizeW, c).
type UpSampling2DLayer struct {
	named
	size [2]int
	err  error
	in   [3]int
}

// UpSampling2D repeats each pixel sizeH times down and sizeW times across,
// Keras' UpSampling2D(size=(sizeH, sizeW)) (its default is (2, 2)). Only
// Keras' default interpolation, "nearest", is implemented: FromConfig
// refuses "bilinear".
func UpSampling2D(sizeH, sizeW int, opts ...Option) *UpSampling2DLayer {
	l := &UpSampling2DLayer{size: [2]int{sizeH, sizeW}}
	if sizeH < 1 || sizeW < 1 {
		l.err = fmt.Errorf("size (%d, %d): both must be 1 or more", sizeH, sizeW)
	}
	applyOptions(&l.named, opts)
	return l
}

// Type returns "UpSampling2D".
func (l *UpSampling2DLayer) Type() string { return "UpSampling2D" }

// CheckConfig checks the layer's name and size.
func (l *UpSampling2DLayer) CheckConfig() error {
	if l.nameErr != nil {
		return fmt.Errorf("UpSampling2D layer: %w", l.nameErr)
	}
	if l.err != nil {
		return fmt.Errorf("UpSampling2D layer %q: %w", l.name, l.err)
	}
	return nil
}

// plan is UpSampling2D's shape rule; no weights.
func (l *UpSampling2DLayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	img, err := images(fmt.Sprintf("UpSampling2D layer %q", l.name), inputShape)
	if err != nil {
		return nil, nil, err
	}
	return []int{img[0] * l.size[0], img[1] * l.size[1], img[2]}, nil, nil
}

// Build checks the input shape and returns the upsampled shape.
func (l *UpSampling2DLayer) Build(inputShape []int, _ *rand.Rand) ([]int, error) {
	return buildImages(l.CheckConfig, l.plan, &l.in, inputShape)
}

// Params returns nil: UpSampling2D has no weights.
func (l *UpSampling2DLayer) Params() []*Param { return nil }

// Call adds the upsampling to the graph (ops.UpSample2D).
func (l *UpSampling2DLayer) Call(in Flow, _ []*gorgonia.Node) (Flow, error) {
	x, err := imageNode(in, l.in)
	if err == nil {
		x, err = ops.UpSample2D(x, l.size[0], l.size[1])
	}
	if err != nil {
		return Flow{}, fmt.Errorf("UpSampling2D layer %q: %w", l.name, err)
	}
	return Flow{Node: x, NeedsGrad: in.NeedsGrad}, nil
}

// Config returns "UpSampling2D" with name, size, data_format
// "channels_last" and interpolation "nearest".
func (l *UpSampling2DLayer) Config() (Config, error) {
	return Config{ClassName: l.Type(), Config: map[string]any{"name": l.name, "size": []int{l.size[0], l.size[1]},
		"data_format": "channels_last", "interpolation": "nearest"}}, nil
}

func upSamplingFromConfig(args map[string]any) (Layer, error) {
	a := struct {
		baseArgs
		Size          json.RawMessage `json:"size"`
		DataFormat    *string         `json:"data_format"`
		Interpolation string          `json:"interpolation"`
	}{Interpolation: "nearest"}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	if err := channelsLast(a.DataFormat); err != nil {
		return nil, err
	}
	if a.Interpolation != "nearest" {
		return nil, fmt.Errorf("interpolation %q is not supported yet: gokeras' UpSampling2D repeats pixels, interpolation \"nearest\" (Keras' default)", a.Interpolation)
	}
	size := [2]int{2, 2}
	if len(a.Size) > 0 {
		var n int
		if err := json.Unmarshal(a.Size, &n); err == nil {
			size = [2]int{n, n}
		} else if err := json.Unmarshal(a.Size, &size); err != nil || !isPair(a.Size) {
			return nil, fmt.Errorf("argument \"size\" is %s: want an integer or a list of two, (height, width)", a.Size)
		}
	}
	return UpSampling2D(size[0], size[1], a.nameOptions()...), nil
}

// ONNX adds ONNX's Resize by the scales (1, 1, sizeH, sizeW), on the
// input channels first, with its defaults: mode "nearest",
// coordinate_transformation_mode "half_pixel", nearest_mode
// "round_prefer_floor". Output pixel i = q·size + r (0 <= r < size) reads
// input pixel round(q + (r+0.5)/size - 0.5), and (r+0.5)/size - 0.5 lies
// strictly between -0.5 and 0.5: pixel q, the pixels repeated.
func (l *UpSampling2DLayer) ONNX(b ONNXGraph, in string) (string, error) {
	x := b.ChannelsFirst(in)
	scales := b.Weight("scales", []int{4}, []float32{1, 1, float32(l.size[0]), float32(l.size[1])})
	return b.Apply("Resize", x, []string{"", scales}), nil
}

// channelsLast checks a config's data_format: null (Keras' None, the
// default) or "channels_last".
func channelsLast(f *string) error {
	if f == nil || *f == "channels_last" {
		return nil
	}
	return fmt.Errorf("data_format %q is not supported: gokeras holds images channels last (\"channels_last\", Keras' default)", *f)
}

// isPair reports whether raw is a JSON list of exactly two values.
func isPair(raw json.RawMessage) bool {
	var l []json.RawMessage
	return json.Unmarshal(raw, &l) == nil && len(l) == 2
}

// sidesArg reads a ZeroPadding2D's padding or a Cropping2D's cropping in
// any of Keras' forms: an integer for every side, (symmetric_height,
// symmetric_width), or ((top, bottom), (left, right)). It returns top,
// bottom, left, right.
func sidesArg(name string, raw json.RawMessage) ([4]int, error) {
	bad := fmt.Errorf("argument %q is %s: want an integer, a list of two integers (symmetric height, width) or two lists of two ((top, bottom), (left, right))",
		name, strings.TrimSpace(string(raw)))
	var n int
	if err := json.Unmarshal(raw, &n); err == nil {
		return [4]int{n, n, n, n}, nil
	}
	var l []json.RawMessage
	if err := json.Unmarshal(raw, &l); err != nil || len(l) != 2 {
		return [4]int{}, bad
	}
	var h, w int
	if json.Unmarshal(l[0], &h) == nil && json.Unmarshal(l[1], &w) == nil {
		return [4]int{h, h, w, w}, nil
	}
	var hp, wp []int
	if json.Unmarshal(l[0], &hp) != nil || json.Unmarshal(l[1], &wp) != nil || len(hp) != 2 || len(wp) != 2 {
		return [4]int{}, bad
	}
	return [4]int{hp[0], hp[1], wp[0], wp[1]}, nil
}
