package safetensors_test

import (
	"bytes"
	"fmt"

	"github.com/gokeras/gokeras/safetensors"
)

func Example() {
	var buf bytes.Buffer
	err := safetensors.Write(&buf, []safetensors.Tensor{
		{Name: "dense/kernel", Shape: []int{3, 2}, Data: []float32{1, 2, 3, 4, 5, 6}},
		{Name: "dense/bias", Shape: []int{2}, Data: []float32{0.5, -0.5}},
	}, map[string]string{"epoch": "3"})
	if err != nil {
		fmt.Println(err)
		return
	}
	f, err := safetensors.Decode(buf.Bytes())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range f.Tensors {
		fmt.Println(t.Name, t.Shape, t.Data)
	}
	fmt.Println("epoch:", f.Metadata["epoch"])
	// Output:
	// dense/bias [2] [0.5 -0.5]
	// dense/kernel [3 2] [1 2 3 4 5 6]
	// epoch: 3
}
