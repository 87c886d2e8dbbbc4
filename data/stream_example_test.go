package data_test

import (
	"context"
	"fmt"
	"io"

	"github.com/gokeras/gokeras/data"
)

// A stream of samples a function makes, shuffled with a buffer, batched
// and read ahead on a goroutine: what a model's Fit takes as it takes a
// Dataset. Each pass reads the stream from its start; Open gives one.
func ExampleStream() {
	squares := data.FromFunc(7, []int{1}, []int{1}, func(i int, x, y []float32) error {
		x[0], y[0] = float32(i), float32(i*i)
		return nil
	})
	s := squares.Shuffle(3, 42).Batch(3, false).Prefetch(2)
	fmt.Println("batches per pass:", s.Cardinality())

	it, err := s.Open(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer it.Close()
	for {
		b, err := it.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(b.N, "samples:", b.X, "labels:", b.Y)
	}
	// Output:
	// batches per pass: 3
	// 3 samples: [1 3 0] labels: [1 9 0]
	// 3 samples: [4 6 5] labels: [16 36 25]
	// 1 samples: [2] labels: [4]
}
