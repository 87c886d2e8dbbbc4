package vm

import (
	"fmt"
	"math"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// hostBackend runs steps on the host: the products with a plain triple
// loop, everything else with the Do of the ops the steps came from, so the
// tests compare the plan's wiring (buffers, order, fusion, reads,
// gradients) against gorgonia's tape machine running the same ops.
type hostBackend struct {
	bufs   [][]float32
	closed bool
	// targetErr is what a device reports when a sparse loss meets a
	// target that is not a class index; Wait returns it.
	targetErr *TargetError
}

func (h *hostBackend) Do(f func() error) error { return f() }

func (h *hostBackend) Alloc(bufs []Buffer) error {
	h.bufs = make([][]float32, len(bufs))
	for i, b := range bufs {
		h.bufs[i] = make([]float32, b.Elems)
	}
	return nil
}

func (h *hostBackend) Upload(b int, src []float32) error {
	if len(src) != len(h.bufs[b]) {
		return fmt.Errorf("upload of %d values into buffer %d of %d", len(src), b, len(h.bufs[b]))
	}
	copy(h.bufs[b], src)
	return nil
}

func (h *hostBackend) Download(b int, dst []float32) error {
	if len(dst) != len(h.bufs[b]) {
		return fmt.Errorf("download of buffer %d (%d values) into %d", b, len(h.bufs[b]), len(dst))
	}
	copy(dst, h.bufs[b])
	return nil
}

func (h *hostBackend) Wait() error {
	if h.targetErr != nil {
		err := h.targetErr
		h.targetErr = nil
		return err
	}
	return nil
}

func (h *hostBackend) Close() error { h.closed = true; return nil }

func (h *hostBackend) dense(b int, shape ...int) *tensor.Dense {
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(h.bufs[b]))
}

// do runs op on tensors and copies the result into buffer out.
func (h *hostBackend) do(op gorgonia.Op, out int, args ...gorgonia.Value) error {
	v, err := op.Do(args...)
	if err != nil {
		return err
	}
	switch r := v.(type) {
	case *tensor.Dense:
		copy(h.bufs[out], r.Data().([]float32))
	case *gorgonia.F32:
		h.bufs[out][0] = float32(*r)
	default:
		return fmt.Errorf("%v returned a %T", op, v)
	}
	return nil
}

func (h *hostBackend) Exec(i int, s *Step) error {
	m, n := s.M, s.N
	switch s.Kind {
	case Gemm:
		a, b, c := h.bufs[s.In[0]], h.bufs[s.In[1]], h.bufs[s.Out[0]]
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				var sum float64
				for p := 0; p < s.K; p++ {
					av := a[i*s.K+p] // a is m×k
					if s.TransA {
						av = a[p*m+i] // a is k×m
					}
					bv := b[p*n+j] // b is k×n
					if s.TransB {
						bv = b[j*s.K+p] // b is n×k
					}
					sum += float64(av) * float64(bv)
				}
				c[i*n+j] = float32(sum)
			}
		}
	case BiasAct:
		x := h.bufs[s.In[0]]
		v := make([]float32, len(x))
		for i := range x {
			v[i] = x[i]
			if s.In[1] != None {
				v[i] += h.bufs[s.In[1]][i%n]
			}
		}
		if s.Out[0] != None {
			copy(h.bufs[s.Out[0]], v)
		}
		if s.Out[1] != None {
			act := s.Node
			if s.Fused != nil {
				act = s.Fused
			}
			return h.do(act.Op(), s.Out[1], tensor.New(tensor.WithShape(m, n), tensor.WithBacking(v)))
		}
	case Softmax:
		return h.do(s.Node.Op(), s.Out[0], h.dense(s.In[0], m, n))
	case ActGrad:
		return h.do(s.Node.Op(), s.Out[0], h.dense(s.In[0], m, n), h.dense(s.In[1], m, n), h.dense(s.In[2], m, n))
	case SoftmaxGrad: // the CPU op ignores x for softmax: pass y in its place
		return h.do(s.Node.Op(), s.Out[0], h.dense(s.In[0], m, n), h.dense(s.In[0], m, n), h.dense(s.In[1], m, n))
	case SumRows:
		a, out := h.bufs[s.In[0]], h.bufs[s.Out[0]]
		for c := 0; c < n; c++ {
			var sum float32
			for r := 0; r < m; r++ {
				sum += a[r*n+c]
			}
			out[c] = sum
		}
	case Loss, LossGrad:
		tcols := n
		if s.Loss.Sparse() {
			tcols = 1
		}
		args := []gorgonia.Value{h.dense(s.In[0], m, n), h.dense(s.In[1], m, tcols)}
		if s.Kind == LossGrad {
			args = append(args, gorgonia.NewF32(h.bufs[s.In[2]][0]))
		}
		if err := h.do(s.Node.Op(), s.Out[0], args...); err != nil {
			if s.Loss.Sparse() {
				// What the kernels do: flag the first bad row, fill NaN.
				for r := 0; r < m; r++ {
					v := h.bufs[s.In[1]][r]
					if v != float32(math.Trunc(float64(v))) || v < 0 || int(v) >= n {
						h.targetErr = &TargetError{Step: i, Row: r}
						break
					}
				}
				return nil
			}
			return err
		}
	default:
		return fmt.Errorf("host backend: no %v", s.Kind)
	}
	return nil
}
