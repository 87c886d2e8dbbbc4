package avx512

import "testing"

// TestConvTileFor checks the tiles picked for the spans of the
// convolutions computed an image row at a time (ResNet-20's 32, 16 and 8
// pixels wide stages) and a grid's long spans: no thrown-away rows or
// columns where a tile divides the span, the widest tiles where several
// do.
func TestConvTileFor(t *testing.T) {
	for _, c := range []struct {
		span, n    int
		rows, cols int
	}{
		{32, 16, 16, 16},
		{16, 32, 8, 32},
		{8, 64, 4, 64},
		{8, 32, 8, 32},
		{24 * 40, 16, 24, 16},
		{12 * 40, 32, 12, 32},
		{6 * 40, 64, 6, 64},
	} {
		tile, cost, ok := convTileFor(c.span, c.n)
		if !ok || tile.r != c.rows || 16*tile.v != c.cols {
			t.Errorf("span %d of %d: tile %dx%d (%v), want %dx%d", c.span, c.n, tile.r, 16*tile.v, ok, c.rows, c.cols)
		}
		if want := c.span * c.n; cost != want {
			t.Errorf("span %d of %d: cost %d, want %d (no value thrown away)", c.span, c.n, cost, want)
		}
	}
	if _, _, ok := convTileFor(3, 16); ok {
		t.Errorf("a span of 3: a tile fits, want none (the fewest rows are 4)")
	}
}
