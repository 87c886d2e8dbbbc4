package cifar10

import (
	"encoding/binary"
	"math/rand/v2"
)

// ClassNames returns the names of the ten CIFAR-10 classes, indexed by label,
// as batches.meta.txt lists them.
func ClassNames() []string {
	return []string{"airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"}
}

// syntheticStream is the PCG stream Synthetic draws from; the seed picks the
// state within it.
const syntheticStream = 0x63696661723130 // "cifar10"

// templateCell is the side, in pixels, of the square blocks a synthetic class
// template is made of, so templates have spatial structure for convolutions.
const templateCell = 4

// Synthetic returns a made-up dataset shaped exactly like CIFAR-10, for tests,
// examples and benchmarks that cannot download the real one. It has train
// and test samples (negative counts count as zero) and the real class names.
//
// Each class has a fixed template image: an 8×8 grid of random colours,
// each cell covering 4×4 pixels. A sample is the average of its class
// template and per-sample uniform noise, so the classes are easy to tell
// apart yet no two samples are equal: even a linear softmax model trained for
// one epoch on 1,000 samples classifies them almost perfectly. Labels are spread evenly over the classes (counts differ by at most
// one) in random order. The same seed always gives the same data.
func Synthetic(train, test int, seed uint64) *Dataset {
	rng := rand.New(rand.NewPCG(seed, syntheticStream))
	templates := syntheticTemplates(rng)
	return &Dataset{
		Train:      syntheticSplit(rng, &templates, max(train, 0)),
		Test:       syntheticSplit(rng, &templates, max(test, 0)),
		ClassNames: ClassNames(),
	}
}

func syntheticTemplates(rng *rand.Rand) [NumClasses][ImageSize]uint8 {
	const cells = Height / templateCell
	var templates [NumClasses][ImageSize]uint8
	for class := range templates {
		var colours [cells * cells * Channels]uint8
		for i := range colours {
			colours[i] = uint8(rng.Uint32())
		}
		t := &templates[class]
		for row := range Height {
			for col := range Width {
				cell := (row/templateCell*cells + col/templateCell) * Channels
				px := (row*Width + col) * Channels
				copy(t[px:px+Channels], colours[cell:cell+Channels])
			}
		}
	}
	return templates
}

func syntheticSplit(rng *rand.Rand, templates *[NumClasses][ImageSize]uint8, n int) Split {
	s := Split{Images: make([]uint8, n*ImageSize), Labels: make([]uint8, n)}
	for i := range s.Labels {
		s.Labels[i] = uint8(i % NumClasses)
	}
	rng.Shuffle(n, func(i, j int) { s.Labels[i], s.Labels[j] = s.Labels[j], s.Labels[i] })
	var noise [8]uint8
	for i, label := range s.Labels {
		t := &templates[label]
		img := s.Images[i*ImageSize : (i+1)*ImageSize]
		for p := 0; p < ImageSize; p += len(noise) {
			binary.LittleEndian.PutUint64(noise[:], rng.Uint64())
			for j, v := range noise {
				img[p+j] = uint8((uint16(t[p+j]) + uint16(v)) >> 1)
			}
		}
	}
	return s
}
