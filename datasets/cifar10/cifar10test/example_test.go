package cifar10test_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gokeras/gokeras/datasets/cifar10"
	"github.com/gokeras/gokeras/datasets/cifar10/cifar10test"
)

// A small cifar-10-batches-bin directory, loaded the way the real one is.
// Tests write it with WriteDir (or pack it with Archive) and their own t;
// this example writes the files itself.
func ExampleFiles() {
	dir, err := os.MkdirTemp("", "cifar10test-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	for name, data := range cifar10test.Files(4) { // 4 records in each batch file
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			fmt.Println(err)
			return
		}
	}

	ds, err := cifar10.Load(context.Background(), cifar10.Options{Path: dir})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ds.Train.Len(), "train,", ds.Test.Len(), "test")

	// Test record 1, row 2, column 3, green: channels last in memory.
	got := ds.Test.Images[((1*32+2)*32+3)*3+1]
	fmt.Println(got == cifar10test.PixelValue(5, 1, 1, 2, 3), ds.Test.Labels[1] == cifar10test.LabelValue(5, 1))
	// Output:
	// 20 train, 4 test
	// true true
}
