//go:build linux && (amd64 || arm64)

package nccl

import (
	"runtime"
	"testing"

	"github.com/ebitengine/purego"
)

// cUniqueID is ncclUniqueId as C declares it, for purego's callback.
type cUniqueID struct{ Internal [UniqueIDBytes]byte }

// The packing of ncclCommInitRank's arguments, through the real
// purego.SyscallN, reaches a C-ABI function with that signature intact:
// the function is a Go callback whose arguments purego decodes by the
// platform's C ABI, independently of initRankArgs.
func TestInitRankABI(t *testing.T) {
	var got struct {
		comm   uintptr
		nranks int32
		id     cUniqueID
		rank   int32
	}
	fn := purego.NewCallback(func(comm uintptr, nranks int32, id cUniqueID, rank int32) int32 {
		got.comm, got.nranks, got.id, got.rank = comm, nranks, id, rank
		return 0
	})
	id := testID()
	var pin runtime.Pinner
	defer pin.Unpin()
	args, err := initRankArgs(runtime.GOARCH, 0x1234, 8, &id, 5, &pin)
	if err != nil {
		t.Fatal(err)
	}
	if r := syscallN(fn, args...); r != 0 {
		t.Fatalf("callback returned %d", r)
	}
	if got.comm != 0x1234 || got.nranks != 8 || got.rank != 5 || got.id.Internal != id {
		t.Errorf("the C function saw comm %#x, nranks %d, rank %d, id %v; want 0x1234, 8, 5, %v", got.comm, got.nranks, got.rank, got.id.Internal, id)
	}
}
