package layers

import (
	"math"
	"math/rand/v2"
	"testing"
)

// HeNormal draws from the normal of standard deviation sqrt(2/fanIn)
// truncated at two of its (scaled) deviations: every value is within
// 2·sqrt(2/fanIn)/0.8796..., and the values' spread is sqrt(2/fanIn).
func TestHeNormalStatistics(t *testing.T) {
	for _, fanIn := range []int{27, 144, 576} {
		data := make([]float32, 200000)
		HeNormal().Fill(data, fanIn, 16, rand.New(rand.NewPCG(1, 2)))
		want := math.Sqrt(2 / float64(fanIn))
		bound := 2 * want / 0.87962566103423978
		var sum, sq float64
		for _, v := range data {
			if math.Abs(float64(v)) > bound*(1+1e-6) {
				t.Fatalf("fanIn %d: value %v beyond the truncation at %v", fanIn, v, bound)
			}
			sum += float64(v)
			sq += float64(v) * float64(v)
		}
		n := float64(len(data))
		mean, std := sum/n, math.Sqrt(sq/n-(sum/n)*(sum/n))
		if math.Abs(mean) > 0.01*want || math.Abs(std-want) > 0.01*want {
			t.Errorf("fanIn %d: mean %.5f, std %.5f; want 0 and %.5f", fanIn, mean, std, want)
		}
	}
}
