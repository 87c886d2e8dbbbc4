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

// Settings of SyntheticHard.
const (
	hardPrototypes  = 4  // looks per class
	hardBackgrounds = 32 // backgrounds shared by all classes
	hardShift       = 5  // the most pixels an object moves, each way
)

// SyntheticHard returns generated CIFAR-shaped data that is learnable but
// hard, so that a model learns it about as it learns CIFAR-10: slowly, far
// from perfect, and better with more epochs. Synthetic's classes, by
// contrast, are told apart almost perfectly after a few dozen steps.
//
// Each class has a few looks (templates made as Synthetic's, half shared by
// the class and half their own). A sample is one look of its class, moved
// a few pixels, blended at a random strength into one of a few backgrounds
// that all classes share, under noise and a random brightness; a quarter of
// the samples show their class's sibling instead (a truck labelled
// automobile, a dog labelled cat), so accuracy cannot reach 1. Labels are
// spread evenly over the classes in random order; the same seed always
// gives the same data.
func SyntheticHard(train, test int, seed uint64) *Dataset {
	rng := rand.New(rand.NewPCG(seed, syntheticStream+1))
	bases := syntheticTemplates(rng)
	var looks [NumClasses][hardPrototypes][ImageSize]uint8
	for class := range looks {
		for k := range hardPrototypes {
			own := syntheticTemplates(rng)
			for p := range ImageSize {
				looks[class][k][p] = uint8((uint16(bases[class][p]) + uint16(own[k%NumClasses][p])) / 2)
			}
		}
	}
	var backgrounds [hardBackgrounds][ImageSize]uint8
	for i := 0; i < hardBackgrounds; i += NumClasses {
		t := syntheticTemplates(rng)
		for j := 0; j < NumClasses && i+j < hardBackgrounds; j++ {
			backgrounds[i+j] = t[j]
		}
	}
	split := func(n int) Split {
		s := Split{Images: make([]uint8, n*ImageSize), Labels: make([]uint8, n)}
		for i := range s.Labels {
			s.Labels[i] = uint8(i % NumClasses)
		}
		rng.Shuffle(n, func(i, j int) { s.Labels[i], s.Labels[j] = s.Labels[j], s.Labels[i] })
		for i, label := range s.Labels {
			shown := int(label)
			if rng.Float64() < hardConfusion {
				shown = hardSibling[label]
			}
			look := &looks[shown][rng.IntN(hardPrototypes)]
			bg := &backgrounds[rng.IntN(hardBackgrounds)]
			dx, dy := rng.IntN(2*hardShift+1)-hardShift, rng.IntN(2*hardShift+1)-hardShift
			strength := float32(hardMinStrength + (hardMaxStrength-hardMinStrength)*rng.Float64())
			brightness := float32(rng.IntN(81) - 40)
			img := s.Images[i*ImageSize : (i+1)*ImageSize]
			for row := range Height {
				srcRow := (row - dy + Height) % Height
				for col := range Width {
					srcCol := (col - dx + Width) % Width
					px, src := (row*Width+col)*Channels, (srcRow*Width+srcCol)*Channels
					for c := range Channels {
						v := strength*float32(look[src+c]) + (1-strength)*float32(bg[px+c]) +
							brightness + float32(rng.IntN(2*hardNoise+1)-hardNoise)
						img[px+c] = uint8(min(max(v, 0), 255))
					}
				}
			}
		}
		return s
	}
	return &Dataset{Train: split(max(train, 0)), Test: split(max(test, 0)), ClassNames: ClassNames()}
}

// How strongly a SyntheticHard object shows over its background, and the
// most its pixels' noise adds or takes away.
const (
	hardMinStrength = 0.25
	hardMaxStrength = 0.55
	hardNoise       = 48
)

// hardConfusion is the share of SyntheticHard samples that show an object
// of their class's sibling (CIFAR-10's cats look like dogs, its
// automobiles like trucks): no model can tell those apart, which keeps
// accuracy from reaching 1.
const hardConfusion = 0.3

// hardSibling pairs the classes that CIFAR-10 models confuse most:
// airplane-ship, automobile-truck, bird-deer, cat-dog, frog-horse.
var hardSibling = [NumClasses]int{8, 9, 4, 5, 2, 3, 7, 6, 0, 1}
