// Command blasline prints the line `train` prints on the CPU to say what
// computes the matrix products (its "BLAS:" line), under the environment
// it is run in (GOKERAS_BLAS, OPENBLAS_*), without training anything.
// bench/record.sh puts it in the header of every results file.
package main

import (
	"fmt"

	"github.com/gokeras/gokeras/blas"
)

func main() {
	fmt.Println("BLAS:", blas.Default())
}
