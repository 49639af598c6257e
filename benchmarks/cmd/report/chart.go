package main

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// bar is one labelled value of a chart.
type bar struct {
	label string
	value float64
}

// barChart draws horizontal bars to a PNG file. With relative, values are
// shown as ratios to the smallest one; otherwise as they are.
func barChart(file, title string, bars []bar, relative bool) error {
	const (
		w, rowH, left, top = 900, 26, 190, 40
	)
	h := top + rowH*len(bars) + 20
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	text(img, 10, 22, title)
	ref, top1 := bars[0].value, bars[0].value
	for _, b := range bars {
		ref = min(ref, b.value)
		top1 = max(top1, b.value)
	}
	if !relative {
		ref = 1
	}
	scale := float64(w-left-110) / (top1 / ref)
	for i, b := range bars {
		y := top + i*rowH
		text(img, 10, y+16, b.label)
		length := int(b.value / ref * scale)
		c := color.RGBA{0x4a, 0x78, 0xb8, 0xff}
		if b.label == "ulidflake" || len(b.label) > 9 && b.label[:9] == "ulidflake" {
			c = color.RGBA{0xd9, 0x6c, 0x1e, 0xff}
		}
		for x := left; x < left+max(length, 1); x++ {
			for yy := y + 4; yy < y+rowH-4; yy++ {
				img.Set(x, yy, c)
			}
		}
		text(img, left+length+6, y+16, fmt.Sprintf("%.2fx", b.value/ref))
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	return png.Encode(f, img)
}

func text(img *image.RGBA, x, y int, s string) {
	d := &font.Drawer{Dst: img, Src: image.NewUniform(color.Black), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}
