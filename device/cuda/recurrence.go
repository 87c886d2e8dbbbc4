//go:build cudavm && cgo

package cuda

import (
	"github.com/gokeras/gokeras/device/internal/plan"
	"github.com/gokeras/gokeras/ops"
)

// offset is p moved on by n float32s.
func offset(p devicePtr, n int) devicePtr { return p + devicePtr(4*n) }

// recurrence runs a Recurrence or RecurrenceGrad step: per timestep one
// cuBLAS product of the state with the recurrent kernel and one
// gk_rec_fwd; for the gradient, the steps again, then per timestep one
// gk_rec_bwd and the products carrying the gradient to the previous state
// and into the recurrent kernel's (and a GRU's recurrent bias') gradient.
// The workspace Out[1] is laid out as ops.RecurrenceParams.WorkOffsets
// says, the same as the CPU's kernel. Initial states and a mask are
// inputs of the kernels; the last states (States) are copied from the
// planes after the steps, and their gradients are where dh and dc start.
// A recurrent dropout mask (RecDropped) makes the state's product one per
// gate (recDropProduct, recDropProductGrad).
func (b *backend) recurrence(s *plan.Step, ptr func(int) devicePtr) error {
	p := s.Op.Recurrence
	if p.Cell == ops.GRUBeforeCell {
		return b.gruBefore(s, ptr)
	}
	proj, rec := ptr(s.In[0]), ptr(s.In[1])
	opt := func(i int) devicePtr {
		if i < 0 {
			return 0
		}
		return ptr(s.In[i])
	}
	rbAt, h0At, c0At, maskAt := p.Inputs()
	rb, h0, c0, mask := opt(rbAt), opt(h0At), opt(c0At), opt(maskAt)
	out, ws := ptr(s.Out[0]), ptr(s.Out[1])
	B, U, T := p.Batch, p.Units, p.Steps
	gu := p.Gates() * U
	zOff, dzOff, dhOff, dcOff := p.WorkOffsets()
	z, dz, dh, dc := offset(ws, zOff), offset(ws, dzOff), offset(ws, dhOff), offset(ws, dcOff)
	hPlane := func(k int) devicePtr { return offset(ws, ((p.Planes()-1)*T+k)*B*U) }
	// prevH is the state before step k: the last step's, h0 or none (0).
	prevH := func(k int) devicePtr {
		if k > 0 {
			return hPlane(k - 1)
		}
		return h0
	}
	acts := []uint64{intArg(int(p.Act)), floatArg(float32(p.Alpha)), intArg(int(p.RecAct)), floatArg(float32(p.RecAlpha)), boolArg(p.Sequences),
		ptrArg(h0), ptrArg(c0), ptrArg(mask), boolArg(p.Backwards), boolArg(p.ZeroMasked)}
	step := func(k int) int {
		if p.Backwards {
			return T - 1 - k
		}
		return k
	}
	y := out
	if s.Kind == plan.RecurrenceGrad {
		y = 0
	}
	var rd *recDrop
	if at := p.RecDropInput(); at >= 0 {
		var err error
		if rd, err = b.newRecDrop(p, ptr(s.In[at]), rec, ws); err != nil {
			return err
		}
	}
	for k := range T {
		if s.Kind == plan.RecurrenceGrad && p.Saved {
			break // the Recurrence step left its planes in ws
		}
		zk := devicePtr(0)
		if h := prevH(k); h != 0 {
			var err error
			if rd != nil {
				err = b.recDropProduct(rd, h, z)
			} else {
				err = gemm(b.blas, false, false, B, gu, U, 1, h, rec, 0, z)
			}
			if err != nil {
				return err
			}
			zk = z
		}
		args := append([]uint64{intArg(int(p.Cell)), ptrArg(proj), ptrArg(zk), ptrArg(rb), ptrArg(ws), ptrArg(y),
			intArg(B), intArg(T), intArg(U), intArg(step(k)), intArg(k)}, acts...)
		if err := b.kern.launch(b.stream, kRecFwd, elemGrid(B*U), elemBlock, 0, args...); err != nil {
			return err
		}
	}
	cPlane := offset(ws, (8*T+T-1)*B*U) // an LSTM's last cell state
	if s.Kind == plan.Recurrence {
		if !p.States {
			return nil
		}
		n := p.OutValues()
		if err := b.kern.copyCols(b.stream, hPlane(T-1), U, 0, offset(out, n), U, 0, B, U); err != nil {
			return err
		}
		if p.Cell == ops.LSTMCell {
			return b.kern.copyCols(b.stream, cPlane, U, 0, offset(out, n+B*U), U, 0, B, U)
		}
		return nil
	}
	parts := p.GradParts()
	dy := ptr(s.In[len(p.InShapes())])
	dproj, drec := out, offset(out, parts[0])
	zero := func(at devicePtr, n int) error { return b.stream.memsetD32(at, 0, int64(n)) }
	if err := zero(drec, U*gu); err != nil {
		return err
	}
	if rd != nil {
		if err := b.recDropKernelGrad(rd, drec, true); err != nil {
			return err
		}
	}
	if err := zero(dh, 2*B*U); err != nil { // dh and dc
		return err
	}
	if p.States { // dh and dc start from the gradients of the last states
		if err := b.kern.copyCols(b.stream, offset(dy, p.OutValues()), U, 0, dh, U, 0, p.StateCount()*B, U); err != nil {
			return err
		}
	}
	var drb, ones devicePtr
	if p.RecBias {
		drb = offset(out, parts[0]+parts[1])
		if err := zero(drb, gu); err != nil {
			return err
		}
		var err error
		if ones, err = b.onesVector(B); err != nil {
			return err
		}
	}
	for k := T - 1; k >= 0; k-- {
		args := append([]uint64{intArg(int(p.Cell)), ptrArg(dy), ptrArg(ws), ptrArg(dproj), ptrArg(dz), ptrArg(dh), ptrArg(dc),
			intArg(B), intArg(T), intArg(U), intArg(step(k)), intArg(k)}, acts...)
		if err := b.kern.launch(b.stream, kRecBwd, elemGrid(B*U), elemBlock, 0, args...); err != nil {
			return err
		}
		if p.RecBias {
			if err := gemm(b.blas, false, false, 1, gu, B, 1, ones, dz, 1, drb); err != nil {
				return err
			}
		}
		if h := prevH(k); h != 0 && rd != nil {
			if err := b.recDropProductGrad(rd, h, dz, dh); err != nil {
				return err
			}
		} else if h != 0 {
			if err := gemm(b.blas, false, true, B, U, gu, 1, dz, rec, 1, dh); err != nil {
				return err
			}
			if err := gemm(b.blas, true, false, U, gu, B, 1, h, dz, 1, drec); err != nil {
				return err
			}
		}
	}
	if rd != nil {
		if err := b.recDropKernelGrad(rd, drec, false); err != nil {
			return err
		}
	}
	if !p.Init {
		return nil
	}
	at := parts[0] + parts[1] // the gradients of the initial states: dh, then dc
	if p.RecBias {
		at += parts[2]
	}
	return b.kern.copyCols(b.stream, dh, U, 0, offset(out, at), U, 0, p.StateCount()*B, U)
}

// gruBefore runs a Recurrence or RecurrenceGrad step of a GRU without
// reset_after (ops.GRUBeforeCell): its kernel's z and r columns and its h
// columns first copied apart (ops.RecurrenceParams.GRUBeforeOffsets),
// then per timestep the state's product with the first, gk_gru0_fwd's
// gates, (r·h)'s product with the second and gk_gru0_fwd's candidate;
// back, per timestep gk_gru0_bwd's two phases around dq's product with
// the h columns, then the products carrying the gradient to the previous
// state and into the two blocks' gradients, copied into the kernel's at
// the end.
func (b *backend) gruBefore(s *plan.Step, ptr func(int) devicePtr) error {
	p := s.Op.Recurrence
	k, st := b.kern, b.stream
	proj, rec := ptr(s.In[0]), ptr(s.In[1])
	out, ws := ptr(s.Out[0]), ptr(s.Out[1])
	B, U, T := p.Batch, p.Units, p.Steps
	zOff, dzOff, dhOff, _ := p.WorkOffsets()
	zr, q := offset(ws, zOff), offset(ws, zOff+2*B*U)
	dzr, dq, dh := offset(ws, dzOff), offset(ws, dzOff+2*B*U), offset(ws, dhOff)
	rzrOff, rhOff, drhOff, drzrOff, drhkOff := p.GRUBeforeOffsets()
	rzr, rh, drh, drzr, drhk := offset(ws, rzrOff), offset(ws, rhOff), offset(ws, drhOff), offset(ws, drzrOff), offset(ws, drhkOff)
	plane := func(f, k int) devicePtr { return offset(ws, (f*T+k)*B*U) }
	acts := []uint64{intArg(int(p.Act)), floatArg(float32(p.Alpha)), intArg(int(p.RecAct)), floatArg(float32(p.RecAlpha)), boolArg(p.Sequences)}
	step := func(k int) int {
		if p.Backwards {
			return T - 1 - k
		}
		return k
	}
	or0 := func(k int, p devicePtr) devicePtr {
		if k == 0 {
			return 0
		}
		return p
	}
	y := out
	if s.Kind == plan.RecurrenceGrad {
		y = 0
	}
	if s.Kind == plan.Recurrence || !p.Saved {
		if err := k.copyCols(st, rec, 3*U, 0, rzr, 2*U, 0, U, 2*U); err != nil {
			return err
		}
		if err := k.copyCols(st, rec, 3*U, 2*U, rh, U, 0, U, U); err != nil {
			return err
		}
		for kk := range T {
			if kk > 0 {
				if err := gemm(b.blas, false, false, B, 2*U, U, 1, plane(7, kk-1), rzr, 0, zr); err != nil {
					return err
				}
			}
			for phase := range 2 {
				if phase == 1 && kk > 0 {
					if err := gemm(b.blas, false, false, B, U, U, 1, plane(6, kk), rh, 0, q); err != nil {
						return err
					}
				}
				args := append([]uint64{intArg(phase), ptrArg(proj), ptrArg(or0(kk, zr)), ptrArg(or0(kk, q)), ptrArg(ws), ptrArg(y),
					intArg(B), intArg(T), intArg(U), intArg(step(kk)), intArg(kk)}, acts...)
				if err := k.launch(st, kGru0Fwd, elemGrid(B*U), elemBlock, 0, args...); err != nil {
					return err
				}
			}
		}
	}
	if s.Kind == plan.Recurrence {
		return nil
	}
	dy := ptr(s.In[len(p.InShapes())])
	drec := offset(out, p.GradParts()[0])
	for _, z := range []struct {
		at devicePtr
		n  int
	}{{drzr, 2 * U * U}, {drhk, U * U}, {dh, B * U}} {
		if err := st.memsetD32(z.at, 0, int64(z.n)); err != nil {
			return err
		}
	}
	for kk := T - 1; kk >= 0; kk-- {
		for phase := range 2 {
			if phase == 1 && kk > 0 {
				if err := gemm(b.blas, false, true, B, U, U, 1, dq, rh, 0, drh); err != nil {
					return err
				}
			}
			args := append([]uint64{intArg(phase), ptrArg(dy), ptrArg(ws), ptrArg(out), ptrArg(dzr), ptrArg(dq), ptrArg(or0(kk, drh)),
				ptrArg(dh), intArg(B), intArg(T), intArg(U), intArg(step(kk)), intArg(kk)}, acts...)
			if err := k.launch(st, kGru0Bwd, elemGrid(B*U), elemBlock, 0, args...); err != nil {
				return err
			}
		}
		if kk > 0 {
			if err := gemm(b.blas, false, true, B, U, 2*U, 1, dzr, rzr, 1, dh); err != nil {
				return err
			}
			if err := gemm(b.blas, true, false, U, 2*U, B, 1, plane(7, kk-1), dzr, 1, drzr); err != nil {
				return err
			}
			if err := gemm(b.blas, true, false, U, U, B, 1, plane(6, kk), dq, 1, drhk); err != nil {
				return err
			}
		}
	}
	if err := k.copyCols(st, drzr, 2*U, 0, drec, 3*U, 0, U, 2*U); err != nil {
		return err
	}
	return k.copyCols(st, drhk, U, 0, drec, 3*U, 2*U, U, U)
}

// recDrop is a Recurrence's recurrent dropout in its workspace
// (ops.RecurrenceParams.RecDropOffsets): the gates' masks and the
// recurrent kernel's blocks of columns copied apart, one (Batch, Units)
// plane and one (Units, Units) matrix per gate, scratch for a gate's
// product, the masked state and its gradient (Batch, Units each), and the
// blocks' gradients.
type recDrop struct {
	p                                    ops.RecurrenceParams
	masks, blocks, prod, hm, dh, dblocks devicePtr
}

// newRecDrop copies mask's (Batch, G·Units) and the kernel rec's (Units,
// G·Units) blocks of columns apart into ws.
func (b *backend) newRecDrop(p ops.RecurrenceParams, mask, rec, ws devicePtr) (*recDrop, error) {
	masks, blocks, prod, hm, dhm, dblocks := p.RecDropOffsets()
	r := &recDrop{p: p, masks: offset(ws, masks), blocks: offset(ws, blocks), prod: offset(ws, prod), hm: offset(ws, hm),
		dh: offset(ws, dhm), dblocks: offset(ws, dblocks)}
	B, U, gu := p.Batch, p.Units, p.Gates()*p.Units
	for g := range p.Gates() {
		if err := b.kern.copyCols(b.stream, mask, gu, g*U, r.mask(g), U, 0, B, U); err != nil {
			return nil, err
		}
		if err := b.kern.copyCols(b.stream, rec, gu, g*U, r.block(r.blocks, g), U, 0, U, U); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// mask is gate g's mask (Batch, Units).
func (r *recDrop) mask(g int) devicePtr { return offset(r.masks, g*r.p.Batch*r.p.Units) }

// block is gate g's (Units, Units) matrix of the blocks at v.
func (r *recDrop) block(v devicePtr, g int) devicePtr { return offset(v, g*r.p.Units*r.p.Units) }

// maskState sets r.hm to h times gate g's mask.
func (b *backend) maskState(r *recDrop, h devicePtr, g int) error {
	bu := r.p.Batch * r.p.Units
	mul := ops.BinaryParams{Kind: ops.BinaryMultiply, A: []int{bu}, B: []int{bu}}
	return b.kern.binary(b.stream, mul, h, r.mask(g), r.hm, bu)
}

// recDropProduct sets z (Batch, G·Units) to the state's product with the
// recurrent kernel under recurrent dropout: gate g's block of columns is
// (h·m_g) times the kernel's block g.
func (b *backend) recDropProduct(r *recDrop, h, z devicePtr) error {
	B, U := r.p.Batch, r.p.Units
	gu := r.p.Gates() * U
	for g := range r.p.Gates() {
		if err := b.maskState(r, h, g); err != nil {
			return err
		}
		if err := gemm(b.blas, false, false, B, U, U, 1, r.hm, r.block(r.blocks, g), 0, r.prod); err != nil {
			return err
		}
		if err := b.kern.copyCols(b.stream, r.prod, U, 0, z, gu, g*U, B, U); err != nil {
			return err
		}
	}
	return nil
}

// recDropProductGrad is recDropProduct's gradient: per gate, dz's block
// g back through the kernel's block g, times m_g, added to dh; (h·m_g)ᵀ
// times it added to the block's gradient.
func (b *backend) recDropProductGrad(r *recDrop, h, dz, dh devicePtr) error {
	B, U := r.p.Batch, r.p.Units
	gu := r.p.Gates() * U
	bu := B * U
	mul := ops.BinaryParams{Kind: ops.BinaryMultiply, A: []int{bu}, B: []int{bu}}
	for g := range r.p.Gates() {
		if err := b.kern.copyCols(b.stream, dz, gu, g*U, r.prod, U, 0, B, U); err != nil {
			return err
		}
		if err := gemm(b.blas, false, true, B, U, U, 1, r.prod, r.block(r.blocks, g), 0, r.dh); err != nil {
			return err
		}
		if err := b.kern.binary(b.stream, mul, r.dh, r.mask(g), r.dh, bu); err != nil {
			return err
		}
		if err := b.kern.add(b.stream, dh, r.dh, dh, bu); err != nil {
			return err
		}
		if err := b.maskState(r, h, g); err != nil {
			return err
		}
		if err := gemm(b.blas, true, false, U, U, B, 1, r.hm, r.prod, 1, r.block(r.dblocks, g)); err != nil {
			return err
		}
	}
	return nil
}

// recDropKernelGrad zeroes the blocks' gradients (start) or copies them
// into the kernel's gradient drec's columns (end).
func (b *backend) recDropKernelGrad(r *recDrop, drec devicePtr, start bool) error {
	U, G := r.p.Units, r.p.Gates()
	if start {
		return b.stream.memsetD32(r.dblocks, 0, int64(G*U*U))
	}
	for g := range G {
		if err := b.kern.copyCols(b.stream, r.block(r.dblocks, g), U, 0, drec, G*U, g*U, U, U); err != nil {
			return err
		}
	}
	return nil
}
