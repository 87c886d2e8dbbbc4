package nccl

import (
	"encoding/binary"
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// The fake library's function addresses: the recorder tells the calls
// apart by them.
const (
	fnVersion = 0x100 + iota
	fnUniqueID
	fnInitRank
	fnAllReduce
	fnDestroy
	fnErrorString
)

var fnNames = map[uintptr]string{fnVersion: "ncclGetVersion", fnUniqueID: "ncclGetUniqueId", fnInitRank: "ncclCommInitRank",
	fnAllReduce: "ncclAllReduce", fnDestroy: "ncclCommDestroy", fnErrorString: "ncclGetErrorString"}

type call struct {
	fn   string
	args []uintptr
}

// fakeNCCL records every call and answers as NCCL would: result[fn] is
// what a call returns (ncclSuccess unless set).
type fakeNCCL struct {
	calls  []call
	result map[string]uintptr
	errTxt map[int32][]byte // NUL-terminated, as ncclGetErrorString's
}

// ptr reads a pointer argument (the double indirection keeps go vet quiet).
func ptr[T any](a uintptr) *T { return *(**T)(unsafe.Pointer(&a)) }

func (f *fakeNCCL) lib() *Lib {
	return &Lib{path: "fake", where: "a test",
		getVersion: fnVersion, getUniqueID: fnUniqueID, commInitRank: fnInitRank,
		allReduce: fnAllReduce, commDestroy: fnDestroy, getErrorString: fnErrorString,
		call: f.call}
}

func (f *fakeNCCL) call(fn uintptr, args ...uintptr) uintptr {
	name, ok := fnNames[fn]
	if !ok {
		panic("call of an address the library did not export")
	}
	f.calls = append(f.calls, call{name, slices.Clone(args)})
	switch name {
	case "ncclGetErrorString":
		s, ok := f.errTxt[int32(args[0])]
		if !ok {
			return 0
		}
		return uintptr(unsafe.Pointer(&s[0]))
	case "ncclGetVersion":
		*ptr[int32](args[0]) = 22703
	case "ncclGetUniqueId":
		id := ptr[UniqueID](args[0])
		for i := range id {
			id[i] = byte(i + 1)
		}
	case "ncclCommInitRank":
		*ptr[uintptr](args[0]) = 0xc0ffee
	}
	return f.result[name]
}

func TestVersionAndUniqueID(t *testing.T) {
	f := &fakeNCCL{}
	l := f.lib()
	if v, err := l.Version(); err != nil || v != 22703 {
		t.Errorf("Version = %d, %v; want 22703", v, err)
	}
	id, err := l.NewUniqueID()
	if err != nil || id[0] != 1 || id[127] != 128 {
		t.Errorf("NewUniqueID = %v, %v; want the bytes the library wrote", id, err)
	}
	if len(f.calls) != 2 || len(f.calls[0].args) != 1 || len(f.calls[1].args) != 1 {
		t.Errorf("calls %+v: want ncclGetVersion(int*) and ncclGetUniqueId(ncclUniqueId*)", f.calls)
	}
}

// ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
// ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t
// stream), with ncclFloat32 = 7 and ncclSum = 0.
func TestAllReduceArguments(t *testing.T) {
	f := &fakeNCCL{}
	c := Comm{lib: f.lib(), handle: 0xc0ffee}
	if err := c.AllReduceSumFloat32(0x7f0000001000, 0x7f0000002000, 12345, 0xabc); err != nil {
		t.Fatal(err)
	}
	if err := c.Destroy(); err != nil {
		t.Fatal(err)
	}
	want := []call{
		{"ncclAllReduce", []uintptr{0x7f0000001000, 0x7f0000002000, 12345, 7, 0, 0xc0ffee, 0xabc}},
		{"ncclCommDestroy", []uintptr{0xc0ffee}},
	}
	if !slices.EqualFunc(f.calls, want, func(a, b call) bool { return a.fn == b.fn && slices.Equal(a.args, b.args) }) {
		t.Errorf("calls\n%#v\nwant\n%#v", f.calls, want)
	}
}

func testID() (id UniqueID) {
	for i := range id {
		id[i] = byte(3*i + 7)
	}
	return id
}

// ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int
// rank): on amd64 the ID's 16 eightbytes go on the stack after the six
// register words (comm, nranks, rank, three unused); on arm64 a pointer to
// a copy goes in the third register.
func TestInitRankArguments(t *testing.T) {
	id := testID()
	var pin runtime.Pinner
	defer pin.Unpin()

	args, err := initRankArgs("amd64", 0xaaaa, 4, &id, 3, &pin)
	if err != nil {
		t.Fatal(err)
	}
	want := []uintptr{0xaaaa, 4, 3, 0, 0, 0}
	for i := 0; i < UniqueIDBytes; i += 8 {
		want = append(want, uintptr(binary.LittleEndian.Uint64(id[i:])))
	}
	if !slices.Equal(args, want) {
		t.Errorf("amd64 arguments\n%#x\nwant\n%#x", args, want)
	}

	args, err = initRankArgs("arm64", 0xaaaa, 4, &id, 3, &pin)
	if err != nil || len(args) != 4 || args[0] != 0xaaaa || args[1] != 4 || args[3] != 3 {
		t.Fatalf("arm64 arguments %#x, %v; want comm, nranks, &copy of the ID, rank", args, err)
	}
	if cp := ptr[UniqueID](args[2]); *cp != id || cp == &id {
		t.Errorf("arm64: the third argument points to %v, want a copy of the ID", *cp)
	}

	if _, err := initRankArgs("riscv64", 0, 1, &id, 0, &pin); err == nil || !strings.Contains(err.Error(), "riscv64") {
		t.Errorf("riscv64: %v, want an error naming it", err)
	}

	// Through the Lib: the communicator the library writes comes back.
	f := &fakeNCCL{}
	c, err := f.lib().InitRank(4, id, 3)
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		if err == nil {
			t.Error("InitRank packed a struct argument on an architecture it does not know")
		}
		return
	}
	if err != nil || c.handle != 0xc0ffee {
		t.Fatalf("InitRank = %+v, %v; want the communicator 0xc0ffee", c, err)
	}
	if len(f.calls) != 1 || f.calls[0].fn != "ncclCommInitRank" || f.calls[0].args[1] != 4 || f.calls[0].args[2] == 0 {
		t.Errorf("calls %+v", f.calls)
	}
}

func TestInitRankChecksRanks(t *testing.T) {
	f := &fakeNCCL{}
	for _, r := range [][2]int{{0, 0}, {2, 2}, {2, -1}, {1 << 32, 0}} {
		if _, err := f.lib().InitRank(r[0], UniqueID{}, r[1]); err == nil || !strings.Contains(err.Error(), "want 0 <= rank < nranks") {
			t.Errorf("InitRank(%d, _, %d): %v", r[0], r[1], err)
		}
	}
	if len(f.calls) != 0 {
		t.Errorf("called NCCL with bad ranks: %+v", f.calls)
	}
}

// A failed call names itself and carries ncclGetErrorString's text.
func TestErrors(t *testing.T) {
	f := &fakeNCCL{
		result: map[string]uintptr{"ncclAllReduce": 5, "ncclCommDestroy": 1<<32 | 3, "ncclCommInitRank": 2},
		errTxt: map[int32][]byte{5: []byte("invalid usage (run with NCCL_DEBUG=WARN for details)\x00"), 3: []byte("internal error\x00")},
	}
	c := Comm{lib: f.lib(), handle: 1}
	err := c.AllReduceSumFloat32(1, 2, 3, 0)
	var ne *Error
	if !errors.As(err, &ne) || ne.Call != "ncclAllReduce" || ne.Code != 5 ||
		err.Error() != "nccl: ncclAllReduce: invalid usage (run with NCCL_DEBUG=WARN for details) (ncclResult_t 5)" {
		t.Errorf("AllReduce: %v", err)
	}
	// ncclResult_t is a C int: the register's upper half is not part of it.
	if err := c.Destroy(); err == nil || err.Error() != "nccl: ncclCommDestroy: internal error (ncclResult_t 3)" {
		t.Errorf("Destroy: %v", err)
	}
	if runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64" {
		if _, err := f.lib().InitRank(2, UniqueID{}, 0); err == nil || err.Error() != "nccl: ncclCommInitRank: unknown error (ncclResult_t 2)" {
			t.Errorf("InitRank: %v", err)
		}
	}
}
