package nn

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/internal/formats/progbar"
	"github.com/gokeras/gokeras/internal/formats/shapes"
	"github.com/gokeras/gokeras/metrics"
	"gorgonia.org/tensor"
)

// Evaluate computes the loss and metrics of the model on data, batch by
// batch (BatchSize, default 32), like Keras' evaluate(return_dict=True).
// With Verbose(1) it draws a progress bar. A nil ctx is taken as
// context.Background().
//
// Evaluate stops before its next batch when ctx is cancelled, returning
// an error that wraps ctx.Err(). With a strategy (WithStrategy), as in
// Fit, a replica whose ctx is cancelled says so with its next batch's
// results, and every replica stops after that batch, at the same sample:
// that replica's error wraps ctx.Err(), the others' say that another
// replica was interrupted (and match context.Canceled).
func (m *Sequential) Evaluate(ctx context.Context, src data.Source, opts ...Option) (Logs, error) {
	if m == nil {
		return nil, fmt.Errorf("evaluate: %w", ErrNilModel)
	}
	if err := m.begin("evaluate", evaluating); err != nil {
		return nil, err
	}
	defer m.end()
	if ctx == nil {
		ctx = context.Background()
	}
	cfg, err := buildRunConfig(opts)
	if err != nil {
		return nil, fmt.Errorf("evaluate: %w", err)
	}
	if m.compiled == nil {
		return nil, fmt.Errorf("evaluate: %w", m.notCompiled())
	}
	ds, _ := src.(data.Dataset)
	switch s := src.(type) {
	case *data.Stream:
		return m.evaluateStreamCall(ctx, cfg, s)
	case data.Dataset, nil:
	default:
		return nil, fmt.Errorf("evaluate: the data is a %T: give a data.Dataset or a *data.Stream", src)
	}
	if err := m.checkData("evaluate", ds); err != nil {
		return nil, err
	}
	steps := stepsFor(ds.Len(), min(cfg.batchSize, ds.Len()))
	if s := m.compiled.strategy; s != nil {
		desc := []string{
			"replicas: " + fmt.Sprint(s.Size()),
			"model and compile settings: " + m.describe(),
			fmt.Sprintf("evaluation samples: %d of shape %v, labels of shape %v", ds.Len(), ds.SampleShape(), ds.LabelShape()),
			fmt.Sprintf("batch size: %d", min(cfg.batchSize, ds.Len())),
		}
		if err := agree(s, desc); err != nil {
			return nil, fmt.Errorf("evaluate: %w", err)
		}
		if s.Rank() != 0 {
			cfg.verbose = 0 // rank 0 draws the progress
		}
		m.compiled.stopWanted, m.compiled.stopAgreed = false, false
	}
	bar := progbar.New(cfg.out, cfg.verbose, steps, cfg.now)
	logs, err := m.evaluate(ctx, ds, cfg.batchSize, bar, true)
	if err != nil {
		return nil, err
	}
	if err := bar.Finish(steps, logs); err != nil {
		return nil, fmt.Errorf("evaluate: writing progress: %w", err)
	}
	result := make(map[string]float64, len(logs))
	for _, l := range logs {
		result[l.Name] = l.Value
	}
	return result, nil
}

// evaluate runs the evaluation loop; bar may be nil (validation inside Fit).
// A batchSize larger than the data is taken as the data's size. When
// stoppable (Evaluate), it stops when ctx is cancelled, with a strategy on
// every replica alike (compiled.stopNow); Fit's validation is not, and
// leaves Fit's wish to stop for Fit.
func (m *Sequential) evaluate(ctx context.Context, ds data.Dataset, batchSize int, bar *progbar.Progbar, stoppable bool) ([]logEntry, error) {
	c := m.compiled
	for _, mt := range c.metrics {
		mt.Reset()
	}
	var lossMean metrics.Mean
	n := ds.Len()
	batchSize = min(batchSize, n)
	labels := m.labelLayoutOf(ds)
	idx := make([]int, 0, batchSize)
	logs := make([]logEntry, 1+len(c.metrics))
	for lo, step := 0, 1; lo < n; lo, step = lo+len(idx), step+1 {
		if stoppable {
			if err := c.stopNow(ctx); err != nil {
				return nil, fmt.Errorf("evaluate: stopped at sample %d of %d: %w", lo, n, err)
			}
		}
		idx = batchIndices(idx, lo, min(batchSize, n-lo))
		loss, err := m.evalShard(ds, idx, labels)
		if err != nil {
			return nil, fmt.Errorf("evaluate: samples %d to %d: %w", lo, lo+len(idx)-1, err)
		}
		c.addToLogs(logs, &lossMean, loss, len(idx))
		if bar != nil {
			bar.Update(step, logs)
		}
	}
	return logs, nil
}

// addToLogs adds the loss of a batch of rows samples to the running mean
// and sets logs to the running figures: the loss, then the metrics.
func (c *compiled) addToLogs(logs []logEntry, lossMean *metrics.Mean, loss float64, rows int) {
	lossMean.Add(loss, float64(rows))
	logs[0] = logEntry{Name: "loss", Value: lossMean.Result()}
	for i, mt := range c.metrics {
		logs[1+i] = logEntry{Name: c.metricNames[i], Value: mt.Result()}
	}
}

// evalShard evaluates the batch idx, or with a strategy this replica's
// shard of it, summed over the replicas.
func (m *Sequential) evalShard(ds data.Dataset, idx []int, labels labelLayout) (float64, error) {
	s := m.compiled.strategy
	if s == nil {
		return m.evalStep(ds, idx, labels, len(idx))
	}
	mine := shard(idx, s.Rank(), s.Size())
	if len(mine) > 0 {
		return m.evalStep(ds, mine, labels, len(idx))
	}
	// A batch smaller than the replicas leaves this one nothing: it adds
	// zeros to the sums, with the state lengths of a program it never runs.
	p, err := m.program(1, labels, modeEvaluate)
	if err != nil {
		return 0, err
	}
	loss, err := m.compiled.reduceResults(p, 0, 0, len(idx), false)
	if err == nil && (math.IsNaN(loss) || math.IsInf(loss, 0)) {
		err = fmt.Errorf("%w (%v)", ErrNonFiniteLoss, loss)
	}
	return loss, err
}

// Predict returns the model's outputs for inputs as plain Go values, one
// row per sample (see data.Predictions: Row, Rows, Argmax), computed in
// batches (BatchSize, default 32) of any size: the last batch may be
// smaller. The model must be compiled, which fixes its device. A nil ctx
// is taken as context.Background().
//
//	pred, err := model.Predict(ctx, inputs)
//	classes := pred.Argmax()
//
// A model of several outputs has PredictOutputs instead.
func (m *Sequential) Predict(ctx context.Context, inputs data.InputSource, opts ...Option) (*data.Predictions, error) {
	out, err := m.PredictTensor(ctx, inputs, opts...)
	if err != nil {
		return nil, err
	}
	return data.TensorPredictions(out)
}

// PredictOutputs is Predict for a model of any number of outputs: one
// Predictions per output, in the order of the model's outputs
// (OutputNames), as Keras' predict returns a list of arrays.
func (m *Sequential) PredictOutputs(ctx context.Context, inputs data.InputSource, opts ...Option) ([]*data.Predictions, error) {
	outs, err := m.predictAll(ctx, inputs, opts)
	if err != nil {
		return nil, err
	}
	preds := make([]*data.Predictions, len(outs))
	for i, out := range outs {
		if preds[i], err = data.TensorPredictions(out); err != nil {
			return nil, fmt.Errorf("predict: output %d: %w", i, err)
		}
	}
	return preds, nil
}

// PredictTensor is Predict returning a gorgonia tensor of shape
// (N, outputs...), as Keras' predict returns an array. It takes Predict's
// options and returns its errors.
func (m *Sequential) PredictTensor(ctx context.Context, inputs data.InputSource, opts ...Option) (*tensor.Dense, error) {
	if m != nil && len(m.outShapes) > 1 {
		return nil, fmt.Errorf("predict: model %q has %d outputs (%s): call PredictOutputs, which returns one set of predictions per output", m.name, len(m.outShapes), strings.Join(m.OutputNames(), ", "))
	}
	outs, err := m.predictAll(ctx, inputs, opts)
	if err != nil {
		return nil, err
	}
	return outs[0], nil
}

// predictAll computes every output of the model for inputs.
func (m *Sequential) predictAll(ctx context.Context, src data.InputSource, opts []Option) ([]*tensor.Dense, error) {
	if m == nil {
		return nil, fmt.Errorf("predict: %w", ErrNilModel)
	}
	if err := m.begin("predict", predicting); err != nil {
		return nil, err
	}
	defer m.end()
	if ctx == nil {
		ctx = context.Background()
	}
	cfg, err := buildRunConfig(opts)
	if err != nil {
		return nil, fmt.Errorf("predict: %w", err)
	}
	if m.compiled == nil {
		return nil, fmt.Errorf("predict: %w", m.notCompiled())
	}
	inputs, _ := src.(data.Inputs)
	switch s := src.(type) {
	case *data.Stream:
		return m.predictStream(ctx, cfg, s)
	case data.Inputs, nil:
	default:
		return nil, fmt.Errorf("predict: the data is a %T: give data.Inputs, a data.Dataset or a *data.Stream", src)
	}
	if err := m.checkData("predict", inputs); err != nil {
		return nil, err
	}
	n := inputs.Len()
	results := make([]*tensor.Dense, len(m.outShapes))
	outCols := make([]int, len(m.outShapes))
	for i, shape := range m.outShapes {
		results[i] = tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(append([]int{n}, shape...)...))
		outCols[i] = shapes.Size(shape)
	}
	batchSize := min(cfg.batchSize, n)
	idx := make([]int, 0, batchSize)
	dsts := make([][]float32, len(results))
	for lo := 0; lo < n; lo += len(idx) {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("predict: stopped at sample %d of %d: %w", lo, n, err)
		}
		idx = batchIndices(idx, lo, min(batchSize, n-lo))
		for i, r := range results {
			dsts[i] = r.Data().([]float32)[lo*outCols[i] : (lo+len(idx))*outCols[i]]
		}
		if err := m.predictStep(inputs, idx, dsts); err != nil {
			return nil, fmt.Errorf("predict: samples %d to %d: %w", lo, lo+len(idx)-1, err)
		}
	}
	return results, nil
}

// batchIndices sets idx to the size indices from lo on.
func batchIndices(idx []int, lo, size int) []int {
	idx = idx[:0]
	for i := range size {
		idx = append(idx, lo+i)
	}
	return idx
}
