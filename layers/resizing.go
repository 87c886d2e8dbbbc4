package layers

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/gokeras/gokeras/internal/formats/configargs"
	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
)

// ResizingOption configures a Resizing layer: Interpolation,
// CropToAspectRatio, or any Option, such as Named.
type ResizingOption interface{ applyResizing(*ResizingLayer) }

func (o nameOption) applyResizing(l *ResizingLayer) { o.applyLayer(&l.named) }

func (o interpolationOption) applyResizing(l *ResizingLayer) { l.interpolation = string(o) }

// InterpolationOption is Interpolation's option, which the random layers
// and Resizing take.
type InterpolationOption interface {
	AugmentOption
	ResizingOption
}

// CropToAspectRatio makes Resizing first crop the largest box of each
// image's centre with the output's aspect ratio, Keras'
// crop_to_aspect_ratio=True, so that the image is not distorted.
func CropToAspectRatio() ResizingOption { return cropToAspect{} }

type cropToAspect struct{}

func (cropToAspect) applyResizing(l *ResizingLayer) { l.cropToAspect = true }

// errResizeGrad is the error of a resizing layer whose input needs a
// gradient.
var errResizeGrad = errors.New("its input depends on weights, and resizing passes no gradient back (unlike Keras'): put it first in the model, before any layer with weights")

// ResizingLayer resizes images, channels last, to a height and a width,
// like keras.layers.Resizing, in training and inference alike: (None, h,
// w, c) becomes (None, height, width, c).
type ResizingLayer struct {
	named
	height, width int
	interpolation string
	cropToAspect  bool
	in            [3]int
}

// Resizing makes a layer resizing images to height×width, Keras'
// Resizing(height, width, interpolation="bilinear",
// crop_to_aspect_ratio=False): as tf.image.resize without antialiasing
// (half-pixel centres), bilinear or, with Interpolation("nearest"), the
// nearest pixel. Keras' other interpolations (bicubic, area, lanczos, ...)
// are not supported. It passes no gradient: put it before any layer with
// weights.
func Resizing(height, width int, opts ...ResizingOption) *ResizingLayer {
	l := &ResizingLayer{height: height, width: width, interpolation: "bilinear"}
	for _, o := range opts {
		if o != nil {
			o.applyResizing(l)
		}
	}
	return l
}

// Type returns "Resizing".
func (l *ResizingLayer) Type() string { return "Resizing" }

// Size returns the output's height and width.
func (l *ResizingLayer) Size() (height, width int) { return l.height, l.width }

// CheckConfig checks the name, the size and the interpolation.
func (l *ResizingLayer) CheckConfig() error {
	if l.nameErr != nil {
		return fmt.Errorf("Resizing layer: %w", l.nameErr)
	}
	if l.height < 1 || l.width < 1 {
		return fmt.Errorf("Resizing layer %q: size %d×%d: the height and the width must be 1 or more", l.name, l.height, l.width)
	}
	if _, err := ops.ParseInterpolation(l.interpolation); err != nil {
		return fmt.Errorf("Resizing layer %q: %w", l.name, err)
	}
	return nil
}

// plan is Resizing's shape rule: images of the layer's size; no weights.
func (l *ResizingLayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	img, err := images(fmt.Sprintf("Resizing layer %q", l.name), inputShape)
	if err != nil {
		return nil, nil, err
	}
	return []int{l.height, l.width, img[2]}, nil, nil
}

// Build checks the arguments and the input shape, and returns the
// resized shape.
func (l *ResizingLayer) Build(inputShape []int, _ *rand.Rand) ([]int, error) {
	return buildImages(l.CheckConfig, l.plan, &l.in, inputShape)
}

// Params returns nil: Resizing has no weights.
func (l *ResizingLayer) Params() []*Param { return nil }

// params is the ops.Resize the layer adds for its input: the whole image
// or, with CropToAspectRatio, smartResizeBox's.
func (l *ResizingLayer) params() ops.ResizeParams {
	interp, _ := ops.ParseInterpolation(l.interpolation)
	p := ops.ResizeParams{BoxH: l.in[0], BoxW: l.in[1], OutH: l.height, OutW: l.width, Interpolation: interp}
	if l.cropToAspect {
		p.Top, p.Left, p.BoxH, p.BoxW = smartResizeBox(l.in[0], l.in[1], l.height, l.width)
	}
	return p
}

// smartResizeBox is the box of an h×w image Keras' smart_resize crops to
// before it resizes to height×width: the largest of the centre with the
// output's aspect ratio, its sizes and offsets computed as smart_resize
// computes them (int(float32(w·height)/width), ...; halves rounded down).
func smartResizeBox(h, w, height, width int) (top, left, boxH, boxW int) {
	boxH = min(h, int(float32(w*height)/float32(width)))
	boxW = min(w, int(float32(h*width)/float32(height)))
	boxH, boxW = max(boxH, 1), max(boxW, 1)
	return int(float32(h-boxH) / 2), int(float32(w-boxW) / 2), boxH, boxW
}

// resize adds p's ops.Resize to the graph for the layer what, or passes
// the input through when p keeps the whole image at its size (as
// tf.image.resize returns such images as they are).
func resize(what string, in Flow, img [3]int, p ops.ResizeParams) (Flow, error) {
	if p.Top == 0 && p.Left == 0 && p.BoxH == img[0] && p.BoxW == img[1] && p.OutH == img[0] && p.OutW == img[1] {
		return in, nil
	}
	if in.NeedsGrad {
		return Flow{}, fmt.Errorf("%s: %w", what, errResizeGrad)
	}
	x, err := imageNode(in, img)
	if err == nil {
		x, err = ops.Resize(x, p)
	}
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	return Flow{Node: x}, nil
}

// Call adds the resizing to the graph (ops.Resize).
func (l *ResizingLayer) Call(in Flow, _ []*gorgonia.Node) (Flow, error) {
	return resize(fmt.Sprintf("Resizing layer %q", l.name), in, l.in, l.params())
}

// Config returns "Resizing" with name, height, width, interpolation and
// crop_to_aspect_ratio.
func (l *ResizingLayer) Config() (Config, error) {
	return Config{ClassName: l.Type(), Config: map[string]any{"name": l.name, "height": l.height, "width": l.width,
		"interpolation": l.interpolation, "crop_to_aspect_ratio": l.cropToAspect}}, nil
}

func resizingFromConfig(args map[string]any) (Layer, error) {
	a := struct {
		baseArgs
		Height        *int   `json:"height"`
		Width         *int   `json:"width"`
		Interpolation string `json:"interpolation"`
		CropToAspect  bool   `json:"crop_to_aspect_ratio"`
	}{Interpolation: "bilinear"}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	if a.Height == nil {
		return nil, missing("height")
	}
	if a.Width == nil {
		return nil, missing("width")
	}
	opts := []ResizingOption{Interpolation(a.Interpolation)}
	for _, o := range a.nameOptions() {
		opts = append(opts, o)
	}
	if a.CropToAspect {
		opts = append(opts, CropToAspectRatio())
	}
	return Resizing(*a.Height, *a.Width, opts...), nil
}

// CenterCropLayer crops the centre of images, channels last, to a height
// and a width, like keras.layers.CenterCrop, in training and inference
// alike: (None, h, w, c) becomes (None, height, width, c).
type CenterCropLayer struct {
	named
	height, width int
	in            [3]int
}

// CenterCrop makes a layer cropping the centre height×width pixels of
// images, Keras' CenterCrop(height, width): the crop starts
// floor((h-height)/2) rows down and floor((w-width)/2) columns across, and
// passes the gradient to its input. As Keras 2 does, an image smaller than
// the crop on either axis is resized instead (Keras' smart_resize: the
// largest box of its centre with the crop's aspect ratio, bilinear), which
// passes no gradient.
func CenterCrop(height, width int, opts ...Option) *CenterCropLayer {
	l := &CenterCropLayer{height: height, width: width}
	applyOptions(&l.named, opts)
	return l
}

// Type returns "CenterCrop".
func (l *CenterCropLayer) Type() string { return "CenterCrop" }

// Size returns the output's height and width.
func (l *CenterCropLayer) Size() (height, width int) { return l.height, l.width }

// CheckConfig checks the name and the size.
func (l *CenterCropLayer) CheckConfig() error {
	if l.nameErr != nil {
		return fmt.Errorf("CenterCrop layer: %w", l.nameErr)
	}
	if l.height < 1 || l.width < 1 {
		return fmt.Errorf("CenterCrop layer %q: size %d×%d: the height and the width must be 1 or more", l.name, l.height, l.width)
	}
	return nil
}

// plan is CenterCrop's shape rule: images of the layer's size; no
// weights.
func (l *CenterCropLayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	img, err := images(fmt.Sprintf("CenterCrop layer %q", l.name), inputShape)
	if err != nil {
		return nil, nil, err
	}
	return []int{l.height, l.width, img[2]}, nil, nil
}

// Build checks the arguments and the input shape, and returns the
// cropped shape.
func (l *CenterCropLayer) Build(inputShape []int, _ *rand.Rand) ([]int, error) {
	return buildImages(l.CheckConfig, l.plan, &l.in, inputShape)
}

// Params returns nil: CenterCrop has no weights.
func (l *CenterCropLayer) Params() []*Param { return nil }

// crops reports whether the input is at least the crop's size (else the
// layer resizes), and the rows and columns cropped off each side.
func (l *CenterCropLayer) crops() (ok bool, top, bottom, left, right int) {
	dh, dw := l.in[0]-l.height, l.in[1]-l.width
	if dh < 0 || dw < 0 {
		return false, 0, 0, 0, 0
	}
	return true, dh / 2, dh - dh/2, dw / 2, dw - dw/2
}

// Call adds the crop (ops.Crop2D) or, for an input smaller than the crop,
// the resizing (ops.Resize) to the graph.
func (l *CenterCropLayer) Call(in Flow, _ []*gorgonia.Node) (Flow, error) {
	what := fmt.Sprintf("CenterCrop layer %q", l.name)
	ok, top, bottom, left, right := l.crops()
	if !ok {
		p := ops.ResizeParams{OutH: l.height, OutW: l.width, Interpolation: ops.InterpolationBilinear}
		p.Top, p.Left, p.BoxH, p.BoxW = smartResizeBox(l.in[0], l.in[1], l.height, l.width)
		return resize(what, in, l.in, p)
	}
	if top+bottom+left+right == 0 {
		return in, nil
	}
	x, err := imageNode(in, l.in)
	if err == nil {
		x, err = ops.Crop2D(x, top, bottom, left, right)
	}
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	return Flow{Node: x, NeedsGrad: in.NeedsGrad}, nil
}

// Config returns "CenterCrop" with name, height and width.
func (l *CenterCropLayer) Config() (Config, error) {
	return Config{ClassName: l.Type(), Config: map[string]any{"name": l.name, "height": l.height, "width": l.width}}, nil
}

func centerCropFromConfig(args map[string]any) (Layer, error) {
	a := struct {
		baseArgs
		Height *int `json:"height"`
		Width  *int `json:"width"`
	}{}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	if a.Height == nil {
		return nil, missing("height")
	}
	if a.Width == nil {
		return nil, missing("width")
	}
	return CenterCrop(*a.Height, *a.Width, a.nameOptions()...), nil
}

// ONNX adds the resizing to an ONNX graph (onnxResize).
func (l *ResizingLayer) ONNX(b ONNXGraph, in string) (string, error) {
	return onnxResize(b, in, l.in, l.params())
}

// ONNX adds the crop (Slice) or, for an input smaller than the crop, the
// resizing to an ONNX graph (onnxResize).
func (l *CenterCropLayer) ONNX(b ONNXGraph, in string) (string, error) {
	ok, top, bottom, left, right := l.crops()
	p := ops.ResizeParams{Top: top, Left: left, BoxH: l.in[0] - top - bottom, BoxW: l.in[1] - left - right, OutH: l.height, OutW: l.width,
		Interpolation: ops.InterpolationBilinear}
	if !ok {
		p.Top, p.Left, p.BoxH, p.BoxW = smartResizeBox(l.in[0], l.in[1], l.height, l.width)
	}
	return onnxResize(b, in, l.in, p)
}

// onnxResize adds p's resizing of the images in to an ONNX graph: Slice
// of the box (in the layout in has) unless it is the whole image, then,
// unless the box keeps its size, Resize on the images channels first to
// the sizes (batch, channels, p.OutH, p.OutW), read from the input's
// Shape: mode "linear" with coordinate_transformation_mode "half_pixel",
// or mode "nearest" with "tf_half_pixel_for_nn" and nearest_mode "floor",
// which read where tf.image.resize reads.
func onnxResize(b ONNXGraph, in string, img [3]int, p ops.ResizeParams) (string, error) {
	x := in
	resized := p.OutH != p.BoxH || p.OutW != p.BoxW
	if resized {
		x = b.ChannelsFirst(in)
	}
	if p.Top != 0 || p.Left != 0 || p.BoxH != img[0] || p.BoxW != img[1] {
		axes := []int64{1, 2}
		if b.IsChannelsFirst(x) {
			axes = []int64{2, 3}
		}
		starts := b.Int64s("starts", int64(p.Top), int64(p.Left))
		ends := b.Int64s("ends", int64(p.Top+p.BoxH), int64(p.Left+p.BoxW))
		x = b.Apply("Slice", x, []string{starts, ends, b.Int64s("axes", axes...)})
	}
	if !resized {
		return x, nil
	}
	shape := b.Node("Shape", []string{x})
	batchChannels := b.Node("Slice", []string{shape, b.Int64s("batch_channels_start", 0), b.Int64s("batch_channels_end", 2)})
	sizes := b.Node("Concat", []string{batchChannels, b.Int64s("size", int64(p.OutH), int64(p.OutW))}, intAttr("axis", 0))
	attrs := []ONNXAttr{stringAttr("mode", "linear"), stringAttr("coordinate_transformation_mode", "half_pixel")}
	if p.Interpolation == ops.InterpolationNearest {
		attrs = []ONNXAttr{stringAttr("mode", "nearest"), stringAttr("coordinate_transformation_mode", "tf_half_pixel_for_nn"),
			stringAttr("nearest_mode", "floor")}
	}
	return b.Apply("Resize", x, []string{"", "", sizes}, attrs...), nil
}
