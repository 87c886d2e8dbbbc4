package layers

// ReferenceAttention is referenceAttention for package layers_test: l's
// output and scores, from its weights, on inputs of the given sample
// shapes (query, value, then key and mask as l takes them).
func ReferenceAttention(l *MultiHeadAttentionLayer, batch int, shapes [][]int, inputs [][]float64) (out, scores []float64) {
	c := attentionCase{l: l, batch: batch, shapes: shapes, inputs: inputs}
	for _, p := range l.Params() {
		w := make([]float64, p.Size())
		for i, v := range p.Value.Data().([]float32) {
			w[i] = float64(v)
		}
		c.weights = append(c.weights, w)
	}
	return referenceAttention(c)
}
