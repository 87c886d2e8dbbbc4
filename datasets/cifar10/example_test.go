package cifar10_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gokeras/gokeras/datasets/cifar10"
)

// Load downloads CIFAR-10 into the cache on first use and reads the cache
// afterwards. Progress goes to stderr.
func ExampleLoad() {
	ds, err := cifar10.Load(context.Background(), cifar10.Options{Progress: os.Stderr})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	fmt.Println(ds.Train.Len(), ds.Test.Len(), ds.Train.SampleShape())
}

// With Options.Path, Load reads a copy you already have and downloads
// nothing. Here the copy is a tiny hand-made cifar-10-batches-bin directory
// whose batches hold one record each.
func ExampleLoad_localCopy() {
	dir, err := os.MkdirTemp("", "cifar10-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	// A record is a label byte, then the red, green and blue 32×32 planes.
	record := make([]byte, cifar10.RecordSize)
	record[0] = 3                 // cat
	record[1+0*1024+2*32+5] = 255 // red plane, row 2, column 5
	for _, name := range []string{
		"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
		"data_batch_4.bin", "data_batch_5.bin", "test_batch.bin",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), record, 0o644); err != nil {
			fmt.Println(err)
			return
		}
	}
	names := strings.Join(cifar10.ClassNames(), "\n") + "\n"
	if err := os.WriteFile(filepath.Join(dir, "batches.meta.txt"), []byte(names), 0o644); err != nil {
		fmt.Println(err)
		return
	}

	ds, err := cifar10.Load(context.Background(), cifar10.Options{Path: dir})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ds.Train.Len(), "train,", ds.Test.Len(), "test")
	fmt.Println("first label:", ds.ClassNames[ds.Train.Labels[0]])

	x := make([]float32, cifar10.ImageSize)
	if err := ds.Train.GatherInputs([]int{0}, x); err != nil {
		fmt.Println(err)
		return
	}
	row, col := 2, 5
	fmt.Println("red, green at row 2, column 5:", x[(row*32+col)*3+0], x[(row*32+col)*3+1])
	// Output:
	// 5 train, 1 test
	// first label: cat
	// red, green at row 2, column 5: 1 0
}

// Synthetic stands in for CIFAR-10 where the real data cannot be had.
func ExampleSynthetic() {
	ds := cifar10.Synthetic(1000, 200, 1)
	fmt.Println(ds.Train.Len(), ds.Test.Len(), ds.Train.SampleShape(), len(ds.ClassNames))

	again := cifar10.Synthetic(1000, 200, 1)
	fmt.Println("same seed, same data:", string(ds.Train.Images) == string(again.Train.Images))
	// Output:
	// 1000 200 [32 32 3] 10
	// same seed, same data: true
}

// A training loop asks a labelled view for one batch at a time.
func ExampleSplit_OneHot() {
	ds := cifar10.Synthetic(100, 0, 1)
	train := ds.Train.OneHot()

	batch := []int{0, 1, 2, 3}
	x := make([]float32, len(batch)*cifar10.ImageSize)
	y := make([]float32, len(batch)*train.LabelShape()[0])
	if err := train.GatherInputs(batch, x); err != nil {
		fmt.Println(err)
		return
	}
	if err := train.GatherLabels(batch, y); err != nil {
		fmt.Println(err)
		return
	}
	for i, idx := range batch {
		fmt.Println(ds.Train.Labels[idx], y[i*10:(i+1)*10])
	}
	// Output:
	// 2 [0 0 1 0 0 0 0 0 0 0]
	// 0 [1 0 0 0 0 0 0 0 0 0]
	// 0 [1 0 0 0 0 0 0 0 0 0]
	// 6 [0 0 0 0 0 0 1 0 0 0]
}

// Sparse labels are the class index as one float, like Keras' y_train.
func ExampleSplit_Sparse() {
	split := &cifar10.Split{Images: make([]uint8, 3*cifar10.ImageSize), Labels: []uint8{4, 0, 9}}
	labels := split.Sparse()
	y := make([]float32, 3)
	if err := labels.GatherLabels([]int{2, 0, 1}, y); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(labels.LabelShape(), y)
	// Output:
	// [1] [9 4 0]
}

func ExampleScale() {
	pixels := []uint8{0, 51, 255}
	x := make([]float32, len(pixels))
	cifar10.Scale(x, pixels)
	fmt.Println(x)
	// Output: [0 0.2 1]
}

func ExampleOneHotEncode() {
	y := make([]float32, 2*3)
	if err := cifar10.OneHotEncode(y, []uint8{2, 0}, 3); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(y)
	// Output: [0 0 1 1 0 0]
}
