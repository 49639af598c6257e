package main

import (
	"image/color"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// bar is one labelled value of a bar chart.
type bar struct {
	label string
	value float64
}

// ulidflakeColor marks ulidflake's own bars and lines.
var ulidflakeColor = color.RGBA{0xd9, 0x6c, 0x1e, 0xff}

// barChart draws horizontal bars, one per value, to a PNG file, with the
// value axis labelled by unit.
func barChart(file, title, unit string, bars []bar) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = unit
	p.X.Min = 0
	names := make([]string, len(bars))
	for i, b := range bars {
		// Bars are drawn bottom-up: reverse them, so that the chart reads
		// in the order of the table.
		j := len(bars) - 1 - i
		names[j] = b.label
		vals := make(plotter.Values, len(bars))
		vals[j] = b.value
		bc, err := plotter.NewBarChart(vals, vg.Points(14))
		if err != nil {
			return err
		}
		bc.Horizontal = true
		bc.LineStyle.Width = 0
		bc.Color = color.RGBA{0x4a, 0x78, 0xb8, 0xff}
		if strings.HasPrefix(b.label, "ulidflake") {
			bc.Color = ulidflakeColor
		}
		p.Add(bc)
	}
	p.NominalY(names...)
	p.Add(plotter.NewGrid())
	return p.Save(16*vg.Centimeter, vg.Length(2+0.75*float64(len(bars)))*vg.Centimeter, file)
}

// series is one line of a line chart.
type series struct {
	label string
	xys   plotter.XYs
}

// lineChart draws lines with points to a PNG file. With hline > 0, a
// dashed horizontal line labelled hlabel marks that value.
func lineChart(file, title, xLabel, yLabel string, lines []series, hline float64, hlabel string) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.X.Min, p.Y.Min = 0, 0
	p.Legend.Top, p.Legend.Left = true, true
	p.Add(plotter.NewGrid())
	for i, s := range lines {
		l, pts, err := plotter.NewLinePoints(s.xys)
		if err != nil {
			return err
		}
		l.Color, pts.Color = plotutil.Color(i), plotutil.Color(i)
		pts.Shape = plotutil.Shape(i)
		p.Add(l, pts)
		p.Legend.Add(s.label, l, pts)
	}
	if hline > 0 {
		f := plotter.NewFunction(func(float64) float64 { return hline })
		f.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		f.Color = color.Gray{0x60}
		p.Add(f)
		p.Legend.Add(hlabel, f)
		p.Y.Max = max(p.Y.Max, hline*1.1)
	}
	return p.Save(18*vg.Centimeter, 11*vg.Centimeter, file)
}
