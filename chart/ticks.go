package chart

import (
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
)

// maxLabels is the most labelled ticks a linear axis gets.
const maxLabels = 7

// eps absorbs the rounding of value/step divisions (0.3/0.1 is
// 2.9999999999999996).
const eps = 1e-9

// stepTicks labels a linear axis every step, step being 1, 2, 2.5 or 5
// times a power of ten, every label with the same decimals (0.2, 0.4, ...,
// 1.0), with unlabelled ticks every minor between (none when minor is 0).
type stepTicks struct {
	step, minor float64
	prec        int // decimals of the labels; -1: 12 significant digits, trailing zeros dropped (1e-09, 600000000)
}

var _ plot.Ticker = stepTicks{}

// Ticks returns the labelled ticks at the multiples of the step within
// [lo, hi], and the minor ticks between.
func (t stepTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for i := math.Ceil(lo/t.step - eps); i <= math.Floor(hi/t.step+eps); i++ {
		v := t.value(i * t.step)
		ticks = append(ticks, plot.Tick{Value: v, Label: t.label(v)})
	}
	if t.minor == 0 {
		return ticks
	}
	for j := math.Ceil(lo/t.minor - eps); j <= math.Floor(hi/t.minor+eps); j++ {
		v := j * t.minor
		if r := v / t.step; math.Abs(r-math.Round(r)) > eps {
			ticks = append(ticks, plot.Tick{Value: v})
		}
	}
	return ticks
}

// value rounds v to the labels' decimals, so that a tick sits where its
// label says, and turns -0 into 0.
func (t stepTicks) value(v float64) float64 {
	if t.prec >= 0 {
		scale := math.Pow10(t.prec)
		v = math.Round(v*scale) / scale
	} else {
		v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64) // 3.0000000000000004e-09 is 3e-09
	}
	if v == 0 {
		return 0
	}
	return v
}

func (t stepTicks) label(v float64) string {
	if t.prec < 0 {
		return strconv.FormatFloat(v, 'g', 12, 64)
	}
	return strconv.FormatFloat(v, 'f', t.prec, 64)
}

// chooseTicks picks the smallest step, 1, 2, 2.5 or 5 times a power of
// ten, that labels [lo, hi] (lo < hi) with at most maxLabels ticks,
// counting those of the range rounded out to the step when roundOut is
// set. A whole axis, one whose values are all whole numbers (epochs, say),
// gets whole steps only and whole minor ticks.
func chooseTicks(lo, hi float64, whole, roundOut bool) stepTicks {
	for exp := int(math.Floor(math.Log10((hi-lo)/maxLabels))) - 1; ; exp++ {
		for _, mant := range []float64{1, 2, 2.5, 5} {
			step := mant * math.Pow10(exp)
			if whole && (step < 1 || mant == 2.5 && exp == 0) {
				continue
			}
			first, last := math.Ceil(lo/step-eps), math.Floor(hi/step+eps)
			if roundOut {
				first, last = math.Floor(lo/step+eps), math.Ceil(hi/step-eps)
			}
			if last-first+1 > maxLabels {
				continue
			}
			t := stepTicks{step: step, prec: max(0, -exp)}
			if mant == 2.5 {
				t.prec = max(0, 1-exp)
			}
			if exp < -6 || exp > 6 {
				t.prec = -1
			}
			t.minor = step / 5
			if mant == 2 {
				t.minor = step / 2
			}
			if whole && t.minor != math.Trunc(t.minor) {
				t.minor = 0
			}
			return t
		}
	}
}

// allWhole reports whether every value is a whole number.
func allWhole(values []float64) bool {
	return !slices.ContainsFunc(values, func(v float64) bool { return v != math.Trunc(v) })
}

// setLinearTicks gives a linear axis, set to its data's range, stepTicks;
// whole says every value on it is a whole number. With roundOut the axis
// runs from a labelled tick to a labelled tick, so its top and bottom are
// labelled (an accuracy reaching 0.97 gets an axis up to a labelled 1.0);
// without it the axis keeps the data's range. An axis of a single value is
// widened around it: by half a unit either side when whole and not
// rounded out (one epoch is labelled 1 alone), else by 5% of its
// magnitude, at least 0.05.
func setLinearTicks(ax *plot.Axis, whole, roundOut bool) {
	lo, hi := ax.Min, ax.Max
	if lo >= hi {
		d := 0.05 * math.Max(math.Abs(lo), 1)
		if whole && !roundOut {
			d = 0.5
		}
		lo, hi = lo-d, hi+d
	}
	t := chooseTicks(lo, hi, whole, roundOut)
	if roundOut {
		lo, hi = t.value(math.Floor(lo/t.step+eps)*t.step), t.value(math.Ceil(hi/t.step-eps)*t.step)
	}
	ax.Min, ax.Max = lo, hi
	ax.Tick.Marker = t
}
