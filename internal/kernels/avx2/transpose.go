package avx2

// Transpose writes the transpose of the rows×cols matrix x (row stride
// ldx) into out, cols×rows (row stride ldo): out[c·ldo+r] = x[r·ldx+c].
// The kernel moves 8×8 blocks through registers; the rows and columns
// past the last multiple of 8 go through Go. It panics if x or out is too
// short for its matrix.
func Transpose(x []float32, ldx int, out []float32, ldo int, rows, cols int) {
	if rows <= 0 || cols <= 0 {
		return
	}
	if ldx < cols || ldo < rows || len(x) < (rows-1)*ldx+cols || len(out) < (cols-1)*ldo+rows {
		panic("avx2.Transpose: a matrix does not fit its slice or its row stride")
	}
	r8, c8 := rows&^7, cols&^7
	if !haveKernels || r8 == 0 || c8 == 0 {
		r8, c8 = 0, 0
	} else {
		transpose8(&x[0], uintptr(ldx*4), &out[0], uintptr(ldo*4), r8/8, c8/8)
	}
	for r := range r8 {
		for c := c8; c < cols; c++ {
			out[c*ldo+r] = x[r*ldx+c]
		}
	}
	for r := r8; r < rows; r++ {
		for c := range cols {
			out[c*ldo+r] = x[r*ldx+c]
		}
	}
}
