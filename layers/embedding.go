package layers

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/gokeras/gokeras/internal/formats/configargs"
	"github.com/gokeras/gokeras/internal/formats/shapes"
	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// EmbeddingOption configures an Embedding layer: EmbeddingsInitializer, or
// any Option, such as Named.
type EmbeddingOption interface{ applyEmbedding(*EmbeddingLayer) }

// EmbeddingsInitializer sets how the embedding table starts (Keras'
// default: uniform in [-0.05, 0.05)).
func EmbeddingsInitializer(i Initializer) EmbeddingOption { return embeddingsInit{i} }

type embeddingsInit struct{ Initializer }

func (e embeddingsInit) applyEmbedding(l *EmbeddingLayer) { l.init = e.Initializer }

func (o nameOption) applyEmbedding(l *EmbeddingLayer) { o.applyLayer(&l.named) }

// EmbeddingLayer maps integer indices to rows of a learned table, like
// keras.layers.Embedding: samples of indices of shape (n, ...) become
// (n, ..., outputDim).
type EmbeddingLayer struct {
	named
	inputDim, outputDim int
	init                Initializer
	table               *Param
	inShape             []int
	maskZero            bool
}

// Embedding makes an embedding of inputDim indices (0 to inputDim-1) into
// vectors of outputDim values. Its input holds the indices as numbers; an
// index outside [0, inputDim) fails the step with an error naming it.
func Embedding(inputDim, outputDim int, opts ...EmbeddingOption) *EmbeddingLayer {
	e := &EmbeddingLayer{inputDim: inputDim, outputDim: outputDim, init: RandomUniform(-0.05, 0.05)}
	for _, o := range opts {
		if o != nil {
			o.applyEmbedding(e)
		}
	}
	return e
}

// Type returns "Embedding".
func (e *EmbeddingLayer) Type() string { return "Embedding" }

// CheckConfig checks the layer's arguments.
func (e *EmbeddingLayer) CheckConfig() error {
	if e.nameErr != nil {
		return fmt.Errorf("embedding layer: %w", e.nameErr)
	}
	if e.inputDim <= 0 || e.outputDim <= 0 {
		return fmt.Errorf("embedding layer %q: input_dim and output_dim must be positive integers, got %d and %d", e.name, e.inputDim, e.outputDim)
	}
	return nil
}

// plan is Embedding's shape rule: samples of indices of shape (...) make
// outputs (..., outputDim) and a table (inputDim, outputDim).
func (e *EmbeddingLayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	if len(inputShape) == 0 {
		return nil, nil, fmt.Errorf("embedding layer %q: expects samples of indices, shape (None, length), but gets %s", e.name, shapes.String(inputShape))
	}
	return append(slices.Clone(inputShape), e.outputDim), []WeightShape{{"embeddings", []int{e.inputDim, e.outputDim}}}, nil
}

// Build makes the table, (inputDim, outputDim).
func (e *EmbeddingLayer) Build(inputShape []int, rng *rand.Rand) ([]int, error) {
	if err := e.CheckConfig(); err != nil {
		return nil, err
	}
	out, ws, err := e.plan(inputShape)
	if err != nil {
		return nil, err
	}
	e.table = &Param{Name: "embeddings", Value: tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(ws[0].Shape...))}
	e.init.Fill(e.table.Value.Data().([]float32), e.inputDim, e.outputDim, rng)
	e.inShape = slices.Clone(inputShape)
	return out, nil
}

// Params returns the table.
func (e *EmbeddingLayer) Params() []*Param {
	if e.table == nil {
		return nil
	}
	return []*Param{e.table}
}

// Call adds the look-up to the graph.
func (e *EmbeddingLayer) Call(in Flow, params []*gorgonia.Node) (Flow, error) {
	what := fmt.Sprintf("embedding layer %q", e.name)
	if len(params) != 1 {
		return Flow{}, fmt.Errorf("%s: got %d weight nodes for 1 weight (was the layer built?)", what, len(params))
	}
	if in.NeedsGrad {
		return Flow{}, fmt.Errorf("%s: its input must be the model's data (indices), not the output of a layer with weights", what)
	}
	n := in.Node.Shape().TotalSize()
	idx, err := ops.Reshape(in.Node, []int{n}, false)
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	rows, err := ops.Gather(params[0], idx)
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	out, err := ops.Reshape(rows, append(in.Node.Shape().Clone(), e.outputDim), true)
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	f := Flow{Node: out, NeedsGrad: true}
	if e.maskZero {
		if s := in.Node.Shape(); len(s) != 2 {
			return Flow{}, fmt.Errorf("%s: mask_zero masks sequences of indices (batch, timesteps), but the input has shape %v", what, s)
		}
		if f.Mask, err = ops.Mask(in.Node, 0); err != nil {
			return Flow{}, fmt.Errorf("%s: %w", what, err)
		}
	}
	return f, nil
}

// ComputesMask is true: with MaskZero the output has a mask of its own,
// else none.
func (e *EmbeddingLayer) ComputesMask() bool { return true }

// Config returns "Embedding" with name, input_dim, output_dim,
// embeddings_initializer and mask_zero.
func (e *EmbeddingLayer) Config() (Config, error) {
	init, err := InitializerConfig(e.init)
	if err != nil {
		return Config{}, fmt.Errorf("embedding layer %q: embeddings_initializer: %w", e.name, err)
	}
	return Config{ClassName: e.Type(), Config: map[string]any{
		"name": e.name, "input_dim": e.inputDim, "output_dim": e.outputDim, "embeddings_initializer": init, "mask_zero": e.maskZero,
	}}, nil
}

func embeddingFromConfig(args map[string]any) (Layer, error) {
	var a struct {
		baseArgs
		InputDim              *int    `json:"input_dim"`
		OutputDim             *int    `json:"output_dim"`
		EmbeddingsInitializer *Config `json:"embeddings_initializer"`
		MaskZero              bool    `json:"mask_zero"`
	}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	if a.InputDim == nil {
		return nil, missing("input_dim")
	}
	if a.OutputDim == nil {
		return nil, missing("output_dim")
	}
	var opts []EmbeddingOption
	if a.EmbeddingsInitializer != nil {
		init, err := InitializerFromConfig(*a.EmbeddingsInitializer)
		if err != nil {
			return nil, fmt.Errorf("embeddings_initializer: %w", err)
		}
		opts = append(opts, EmbeddingsInitializer(init))
	}
	if a.MaskZero {
		opts = append(opts, MaskZero(true))
	}
	for _, o := range a.nameOptions() {
		opts = append(opts, o)
	}
	return Embedding(*a.InputDim, *a.OutputDim, opts...), nil
}

// ONNX adds the look-up to an ONNX graph: the float32 indices cast to
// int64, then Gather of the table's rows. Where Predict refuses an index
// that is not a row of the table, ONNX refuses one past the end only: its
// Gather counts a negative index from the end, and the cast truncates a
// fraction.
func (e *EmbeddingLayer) ONNX(b ONNXGraph, in string) (string, error) {
	if e.maskZero {
		return "", fmt.Errorf("embedding layer %q: gokeras cannot export its mask (mask_zero) to ONNX (a mask may skip any step, and ONNX's recurrent operators can only cut a sequence's end): save the model with Save instead, or export a model without mask_zero", e.name)
	}
	if e.table == nil {
		return "", fmt.Errorf("%s layer %q has no table: is the model built?", e.Type(), e.name)
	}
	table := onnxWeight(b, e.table)
	idx := b.Apply("Cast", b.ChannelsLast(in), nil, intAttr("to", onnxInt64))
	return b.Node("Gather", []string{table, idx}, intAttr("axis", 0)), nil
}
