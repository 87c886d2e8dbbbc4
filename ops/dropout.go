package ops

import (
	"fmt"
	"hash"
	"math"
	"math/bits"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// DropoutParams say which units a dropout drops. A unit is dropped with
// probability Rate; the others are scaled by 1/(1-Rate) (inverted
// dropout). Which ones is a pure function of Key, the training step and
// the unit's index in the step's whole batch (Philox4x32-10, see
// DropoutMask), so every backend drops the same units for the same key
// and step, and the replicas of a data-parallel step, each given its
// shard's first row, drop what one process drops for the whole batch.
type DropoutParams struct {
	Rate float64
	Key  uint64
}

// Threshold is the integer below which a unit's random word drops it:
// Rate·2³², rounded down.
func (d DropoutParams) Threshold() uint32 {
	return uint32(math.Min(math.Floor(d.Rate*(1<<32)), math.MaxUint32))
}

// Scale is what kept units are multiplied by: 1/(1-Rate), in float32.
func (d DropoutParams) Scale() float32 { return float32(1 / (1 - d.Rate)) }

// StepValues encodes a training step and the index in the step's whole
// batch of the first row of the batch computed here (0, but for a replica
// of a data-parallel step, given a shard of the batch) as the four values
// of a dropout's step input: the step's low 24 bits and the rest, then
// the row's, each exact in float32.
func StepValues(step uint64, firstRow int) [4]float32 {
	r := uint64(firstRow)
	return [4]float32{float32(step & (1<<24 - 1)), float32(step >> 24), float32(r & (1<<24 - 1)), float32(r >> 24)}
}

// StepValueCount is the number of values of a dropout's step input.
const StepValueCount = 4

// stepOf decodes StepValues: the step, and the first unit of x given its
// units per row.
func stepOf(v [4]float64, unitsPerRow int) (step uint64, first int) {
	row := uint64(v[3])<<24 | uint64(v[2])
	return uint64(v[1])<<24 | uint64(v[0]), int(row) * unitsPerRow
}

// Dropout adds the node that drops units of x as p says, for the training
// step held by step, a node of two values written by StepValues. Its
// gradient is the same dropout applied to the gradient of its output.
func Dropout(x, step *gorgonia.Node, p DropoutParams) (*gorgonia.Node, error) {
	if !(p.Rate >= 0 && p.Rate < 1) {
		return nil, fmt.Errorf("dropout: the rate must be in [0, 1), got %v", p.Rate)
	}
	if step.Shape().TotalSize() != StepValueCount {
		return nil, fmt.Errorf("dropout: the step input must hold %d values (StepValues), got shape %v", StepValueCount, step.Shape())
	}
	return gorgonia.ApplyOp(dropoutOp{p: p, dims: x.Dims()}, x, step)
}

type dropoutOp struct {
	common
	p    DropoutParams
	dims int
}

func (op dropoutOp) String() string {
	return fmt.Sprintf("Dropout{rate=%v, key=%#x, dims=%d}", op.p.Rate, op.p.Key, op.dims)
}
func (op dropoutOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op dropoutOp) Hashcode() uint32      { return hashOf(op) }
func (op dropoutOp) Arity() int            { return 2 }

func (op dropoutOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	t := gorgonia.TensorType{Dims: op.dims, Of: a}
	return hm.NewFnType(t, gorgonia.TensorType{Dims: 1, Of: a}, t)
}

func (op dropoutOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(op, in, 0)
	if err != nil {
		return nil, err
	}
	return s.Clone(), nil
}

func (op dropoutOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	x, err := denseArg(op, args, 0)
	if err != nil {
		return nil, err
	}
	st, err := denseArg(op, args, 1)
	if err != nil {
		return nil, err
	}
	if st.Shape().TotalSize() != StepValueCount {
		return nil, fmt.Errorf("%v: the step input has shape %v", op, st.Shape())
	}
	var v [4]float64
	for i := range v {
		e, _ := st.At(i)
		v[i] = toFloat(e)
	}
	step, first := stepOf(v, unitsPerRow(x.Shape()))
	out := newLike(x.Dtype(), x.Shape().Clone()...)
	switch od := out.Data().(type) {
	case []float32:
		dropout(op.p, step, first, x.Data().([]float32), od)
	case []float64:
		dropout(op.p, step, first, x.Data().([]float64), od)
	}
	return out, nil
}

// unitsPerRow is the values of one sample of a dropout's input: all of
// them after the batch dimension.
func unitsPerRow(s tensor.Shape) int {
	if len(s) == 0 || s[0] == 0 {
		return 0
	}
	return s.TotalSize() / s[0]
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case float32:
		return float64(x)
	case float64:
		return x
	}
	return 0
}

func (op dropoutOp) DiffWRT(inputs int) []bool { return []bool{true, false} }

func (op dropoutOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	dx, err := gorgonia.ApplyOp(op, grad, inputs[1])
	if err != nil {
		return nil, fmt.Errorf("%v: gradient: %w", op, err)
	}
	return gorgonia.Nodes{dx, nil}, nil
}

// Philox4x32 is the Philox4x32-10 counter-based generator of Salmon et
// al. (Random123): four random words from a counter and a key.
func Philox4x32(ctr [4]uint32, key [2]uint32) [4]uint32 {
	const m0, m1 = 0xD2511F53, 0xCD9E8D57
	const w0, w1 = 0x9E3779B9, 0xBB67AE85
	for range 10 {
		hi0, lo0 := bits.Mul32(m0, ctr[0])
		hi1, lo1 := bits.Mul32(m1, ctr[2])
		ctr = [4]uint32{hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0}
		key[0] += w0
		key[1] += w1
	}
	return ctr
}

// DropoutMask fills keep[i] with whether unit first+i survives a dropout
// with p at the given step. Unit u's word is word u%4 of Philox4x32 with
// counter (u/4 low and high 32 bits, step low and high 32 bits) and key
// (Key low, high 32 bits); it survives when the word is at least
// p.Threshold().
func DropoutMask(p DropoutParams, step uint64, first int, keep []bool) {
	key := [2]uint32{uint32(p.Key), uint32(p.Key >> 32)}
	t := p.Threshold()
	var words [4]uint32
	block := -1
	for i := range keep {
		u := first + i
		if b := u >> 2; b != block {
			block = b
			words = Philox4x32([4]uint32{uint32(uint64(b)), uint32(uint64(b) >> 32), uint32(step), uint32(step >> 32)}, key)
		}
		keep[i] = words[u&3] >= t
	}
}

// dropout writes x with p's dropped units zeroed and the others scaled;
// x[0] is unit first of the step's batch.
func dropout[T float](p DropoutParams, step uint64, first int, x, y []T) {
	if x32, ok := any(x).([]float32); ok {
		dropout32(p, step, first, x32, any(y).([]float32))
		return
	}
	scale := T(p.Scale())
	const chunk = 1 << 12
	parallel((len(x)+chunk-1)/chunk, chunk, func(lo, hi int) {
		var keep [chunk]bool
		for c := lo; c < hi; c++ {
			a, b := c*chunk, min((c+1)*chunk, len(x))
			k := keep[:b-a]
			DropoutMask(p, step, first+a, k)
			for i, v := range x[a:b] {
				if k[i] {
					y[a+i] = v * scale
				} else {
					y[a+i] = 0
				}
			}
		}
	})
}

// dropout32 is dropout for float32, the training path: the same units
// and values as DropoutMask and dropout's loop, but each Philox block
// used for its four units at once and the choice between v·scale and +0
// made on the bits, without a branch to mispredict on random units.
func dropout32(p DropoutParams, step uint64, first int, x, y []float32) {
	scale := float32(p.Scale())
	key := [2]uint32{uint32(p.Key), uint32(p.Key >> 32)}
	t := uint64(p.Threshold())
	// Chunks of the batch's units (global: first + local) that start on a
	// Philox block; the first and last may be partial.
	const chunk = 1 << 12 // a multiple of 4
	lo0, hi0 := first, first+len(x)
	c0 := lo0 / chunk
	parallel((hi0+chunk-1)/chunk-c0, chunk, func(lo, hi int) {
		for c := c0 + lo; c < c0+hi; c++ {
			a, b := max(c*chunk, lo0), min((c+1)*chunk, hi0)
			x, y := x[a-first:b-first], y[a-first:b-first] // this chunk's
			u := a
			if u&3 != 0 { // the head, in a block that starts before a
				blk := uint64(u >> 2)
				words := Philox4x32([4]uint32{uint32(blk), uint32(blk >> 32), uint32(step), uint32(step >> 32)}, key)
				for ; u < b && u&3 != 0; u++ {
					keep := uint32((uint64(words[u&3])-t)>>63) - 1
					y[u-a] = math.Float32frombits(math.Float32bits(x[u-a]*scale) & keep)
				}
			}
			// Whole groups of 64 units on the AVX-512 kernel (the same
			// bits), the rest here.
			u += dropoutKernel(x[u-a:], y[u-a:], uint64(u>>2), step, p.Key, uint32(t), scale)
			for ; u < b; u += 4 {
				blk := uint64(u >> 2)
				words := Philox4x32([4]uint32{uint32(blk), uint32(blk >> 32), uint32(step), uint32(step >> 32)}, key)
				o := u - a
				for i, w := range words[:min(4, b-u)] {
					// All ones when w ≥ t (kept), else zero.
					keep := uint32((uint64(w)-t)>>63) - 1
					y[o+i] = math.Float32frombits(math.Float32bits(x[o+i]*scale) & keep)
				}
			}
		}
	})
}
