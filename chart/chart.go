package chart

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"

	"github.com/gokeras/gokeras/internal/sys/atomicfile"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Series is one named line.
type Series struct {
	Name string
	X, Y []float64
	// Dashed draws the line dashed (validation curves, say).
	Dashed bool
}

// Panel is one chart: a title, axis labels and its lines.
type Panel struct {
	Title, XLabel, YLabel string
	Series                []Series
	// LogX and LogY use logarithmic axes (every value must be positive).
	LogX, LogY bool
	// LegendLeft and LegendBottom move the legend from its default place,
	// the top right, out of the way of the curves: a falling loss leaves the
	// top right empty, a rising accuracy the bottom right.
	LegendLeft, LegendBottom bool
}

// palette holds distinct colours for up to six series per panel.
var palette = []color.Color{
	color.RGBA{R: 31, G: 119, B: 180, A: 255},  // blue
	color.RGBA{R: 255, G: 127, B: 14, A: 255},  // orange
	color.RGBA{R: 44, G: 160, B: 44, A: 255},   // green
	color.RGBA{R: 214, G: 39, B: 40, A: 255},   // red
	color.RGBA{R: 148, G: 103, B: 189, A: 255}, // purple
	color.RGBA{R: 140, G: 86, B: 75, A: 255},   // brown
}

// check validates a panel before anything is drawn.
func (p Panel) check() error {
	if len(p.Series) == 0 {
		return fmt.Errorf("chart %q has no series", p.Title)
	}
	for _, s := range p.Series {
		if len(s.X) != len(s.Y) {
			return fmt.Errorf("chart %q: series %q has %d x values and %d y values", p.Title, s.Name, len(s.X), len(s.Y))
		}
		for i := range s.X {
			for _, v := range []float64{s.X[i], s.Y[i]} {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return fmt.Errorf("chart %q: series %q has a non-finite value %v", p.Title, s.Name, v)
				}
			}
			if (p.LogX && s.X[i] <= 0) || (p.LogY && s.Y[i] <= 0) {
				return fmt.Errorf("chart %q: series %q has a value <= 0 on a logarithmic axis", p.Title, s.Name)
			}
		}
	}
	return nil
}

func (p Panel) plot() (*plot.Plot, error) {
	pl := plot.New()
	pl.Title.Text = p.Title
	pl.X.Label.Text = p.XLabel
	pl.Y.Label.Text = p.YLabel
	pl.Add(plotter.NewGrid())
	if p.LogX {
		pl.X.Scale = plot.LogScale{}
		pl.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	if p.LogY {
		pl.Y.Scale = plot.LogScale{}
		pl.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	pl.Legend.Top = !p.LegendBottom
	pl.Legend.Left = p.LegendLeft
	var xs, ys []float64
	for i, s := range p.Series {
		pts := make(plotter.XYs, len(s.X))
		for j := range s.X {
			pts[j].X, pts[j].Y = s.X[j], s.Y[j]
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, fmt.Errorf("chart %q, series %q: %w", p.Title, s.Name, err)
		}
		c := palette[i%len(palette)]
		line.Color, points.Color = c, c
		line.Width = vg.Points(1.5)
		points.Shape = draw.CircleGlyph{}
		points.Radius = vg.Points(2)
		if s.Dashed {
			line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		pl.Add(line, points)
		pl.Legend.Add(s.Name, line, points)
		xs, ys = append(xs, s.X...), append(ys, s.Y...)
	}
	// Linear axes get ticks at round steps. x keeps the data's range
	// (epochs 1 to 12 do not become 0 to 12), with whole ticks only when
	// every x is whole; y is rounded out to labelled ticks at both ends.
	if !p.LogX && allWhole(xs) {
		setLinearTicks(&pl.X, true, false)
	}
	if !p.LogY {
		setLinearTicks(&pl.Y, allWhole(ys), true)
	}
	return pl, nil
}

// WritePNG draws the panels side by side into a PNG image of the given
// size in pixels.
func WritePNG(w io.Writer, widthPx, heightPx int, panels ...Panel) error {
	if len(panels) == 0 {
		return errors.New("chart: nothing to draw")
	}
	if widthPx <= 0 || heightPx <= 0 {
		return fmt.Errorf("chart: image size %dx%d must be positive", widthPx, heightPx)
	}
	plots := make([][]*plot.Plot, 1)
	for _, p := range panels {
		if err := p.check(); err != nil {
			return err
		}
		pl, err := p.plot()
		if err != nil {
			return err
		}
		plots[0] = append(plots[0], pl)
	}
	const dpi = 96
	img := vgimg.NewWith(vgimg.UseWH(vg.Length(widthPx)*vg.Inch/dpi, vg.Length(heightPx)*vg.Inch/dpi), vgimg.UseDPI(dpi))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: len(panels), PadX: vg.Millimeter * 4, PadTop: vg.Millimeter * 2,
		PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align(plots, tiles, dc)
	for i, pl := range plots[0] {
		pl.Draw(canvases[0][i])
	}
	_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(w)
	return err
}

// SavePNG writes WritePNG's image to path, replacing any file there
// atomically.
func SavePNG(path string, widthPx, heightPx int, panels ...Panel) error {
	for _, p := range panels { // fail before creating anything
		if err := p.check(); err != nil {
			return err
		}
	}
	return atomicfile.Write(path, func(w io.Writer) error { return WritePNG(w, widthPx, heightPx, panels...) })
}
