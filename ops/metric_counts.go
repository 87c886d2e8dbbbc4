package ops

import "math"

// metricCounts writes p's confusion counts for the batch into out
// (MetricStateSize values), as Keras' Precision and Recall, AUC and
// F1Score count them; labels have as many columns as pred (cols). The
// bad outputs, counted last, are those not in [0, 1] (after the sigmoid
// of FromLogits), which Precision, Recall and AUC refuse.
func metricCounts(p MetricParams, labels, pred []float32, cols int, out []float32) {
	clear(out[:MetricStateSize(p, cols)])
	rows := len(pred) / cols
	switch p.Kind {
	case MetricPrecisionRecall:
		threshold, lo, hi := p.PrecisionRecallColumns(cols)
		var tp, fp, fn, bad float64
		for r := 0; r < rows; r++ {
			lr, pr := labels[r*cols:(r+1)*cols], pred[r*cols:(r+1)*cols]
			for _, v := range pr {
				if !(v >= 0 && v <= 1) {
					bad++
				}
			}
			for j := lo; j < hi; j++ {
				predicted := (p.K == 0 || TopKRank(pr, j) < p.K) && (pr[j] > threshold || threshold == 0)
				switch positive := lr[j] != 0; {
				case positive && predicted:
					tp++
				case predicted:
					fp++
				case positive:
					fn++
				}
			}
		}
		out[0], out[1], out[2], out[3] = float32(tp), float32(fp), float32(fn), float32(bad)
	case MetricAUC:
		n := p.Thresholds
		c := 1
		if p.MultiLabel {
			c = cols
		}
		tp, fp, pos, neg := out[:c*n], out[c*n:2*c*n], out[2*c*n:2*c*n+c], out[2*c*n+c:2*c*n+2*c]
		scale := float32(n - 1)
		bad := 0
		for i, v := range pred[:rows*cols] {
			col := 0
			if p.MultiLabel {
				col = i % cols
			}
			if p.FromLogits {
				v = Sigmoid32(v)
			}
			if !(v >= 0 && v <= 1) {
				bad++
				continue
			}
			b := max(int(math.Ceil(float64(v*scale)))-1, 0)
			if labels[i] != 0 {
				tp[col*n+b]++
				pos[col]++
			} else {
				fp[col*n+b]++
				neg[col]++
			}
		}
		out[2*c*n+2*c] = float32(bad)
	case MetricF1:
		tp, fp, fn, support := out[:cols], out[cols:2*cols], out[2*cols:3*cols], out[3*cols:4*cols]
		for j := 0; j < cols; j++ {
			var t, f, m, s float64
			for r := 0; r < rows; r++ {
				pr := pred[r*cols : (r+1)*cols]
				var predicted float64
				if F1Predicted(pr, j, p.Threshold) {
					predicted = 1
				}
				label := float64(labels[r*cols+j])
				t += predicted * label
				f += predicted * (1 - label)
				m += (1 - predicted) * label
				s += label
			}
			tp[j], fp[j], fn[j], support[j] = float32(t), float32(f), float32(m), float32(s)
		}
	}
}

// PrecisionRecallColumns resolves MetricPrecisionRecall's settings for
// outputs of cols columns: the threshold (Keras' 0.5 when neither it nor
// K is set) and the columns [lo, hi) it counts (ClassID's, or all).
func (p MetricParams) PrecisionRecallColumns(cols int) (threshold float32, lo, hi int) {
	threshold, lo, hi = p.Threshold, 0, cols
	if threshold == 0 && p.K == 0 {
		threshold = 0.5
	}
	if p.ClassID >= 0 {
		lo, hi = p.ClassID, p.ClassID+1
	}
	return threshold, lo, hi
}

// TopKRank is the place of row[j] when row is sorted from the largest
// value down, ties kept in column order (a stable sort): the number of
// values larger than row[j] and of those equal to it before it.
func TopKRank(row []float32, j int) int {
	rank := 0
	for i, v := range row {
		if v > row[j] || v == row[j] && i < j {
			rank++
		}
	}
	return rank
}

// F1Predicted says whether Keras' F1Score predicts column j of a row: its
// output above threshold, or, with threshold 0, equal to the row's
// largest and not zero.
func F1Predicted(row []float32, j int, threshold float32) bool {
	if threshold != 0 {
		return row[j] > threshold
	}
	top := row[0]
	for _, v := range row {
		top = max(top, v)
	}
	return row[j] >= top && math.Abs(float64(row[j])) > 1e-12
}

// Sigmoid32 is the logistic function, rounded to float32 as Keras'
// float32 sigmoid rounds it.
func Sigmoid32(x float32) float32 {
	return float32(1 / (1 + math.Exp(-float64(x))))
}
