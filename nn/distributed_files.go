package nn

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"unsafe"

	"github.com/gokeras/gokeras/safetensors"
)

// Files under a strategy (WithStrategy), as a DDP user expects them:
//
//   - SaveWeights, SaveCheckpoint and Save write on rank 0 only. On the
//     other ranks they return nil without writing and without talking to
//     the other replicas, so they may be called on every rank (train's
//     --checkpoint callback is) or on rank 0 alone (a ModelCheckpoint given
//     to rank 0's Fit only) without a hang. They do not wait for rank 0's
//     write: to load in the same job what was just saved, call the
//     strategy's Barrier (distribute.MultiWorkerStrategy.Barrier) first, as
//     PyTorch users call dist.barrier().
//   - LoadWeights, LoadCheckpoint and LoadModel (given the strategy in
//     CompileOptions) are collective: every rank calls them, each reads the
//     file itself (a shared filesystem, or a copy on each machine), and
//     before anything changes the replicas compare a SHA-256 of what they
//     read (metadata and tensors). If a rank could not read the file, or
//     read different content (a stale copy, a rank that loaded before rank
//     0's save), every rank fails, the ones that differ saying so, and no
//     replica changes.

// errReplicaInterrupted is the cause of the interruption of a replica
// whose own context was not cancelled, stopped with the others because
// another replica was.
var errReplicaInterrupted = fmt.Errorf("another replica was interrupted: %w", context.Canceled)

// writesFiles reports whether this replica writes the files the model
// saves: every model without a strategy, rank 0 with one.
func (m *Sequential) writesFiles() bool {
	return m.compiled == nil || m.compiled.strategy == nil || m.compiled.strategy.Rank() == 0
}

// fileStrategy is the strategy a load is collective over, nil for none.
func (m *Sequential) fileStrategy() Strategy {
	if m.compiled == nil {
		return nil
	}
	return m.compiled.strategy
}

// fileDigest is the SHA-256 of what a safetensors file holds: its metadata
// in key order, then each tensor's name, shape and values in file order.
func fileDigest(f *safetensors.File) [sha256.Size]byte {
	h := sha256.New()
	var n [8]byte
	put := func(s string) {
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	for _, k := range slices.Sorted(maps.Keys(f.Metadata)) {
		put(k)
		put(f.Metadata[k])
	}
	for _, t := range f.Tensors {
		put(t.Name)
		for _, d := range t.Shape {
			binary.LittleEndian.PutUint64(n[:], uint64(d))
			h.Write(n[:])
		}
		if len(t.Data) > 0 {
			h.Write(unsafe.Slice((*byte)(unsafe.Pointer(&t.Data[0])), 4*len(t.Data)))
		}
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// agreeOnFile makes a load collective over s (nil: nothing to do): f and
// readErr are what this replica read from path. It returns nil on every
// replica when every replica read the same content, and an error on every
// replica otherwise: the replicas that could not read, or read other
// content than rank 0, say so, and the others name them.
func agreeOnFile(s Strategy, f *safetensors.File, readErr error, path string) error {
	if s == nil {
		return readErr
	}
	// Rank 0's status (1: read) and digest.
	var mine [1 + sha256.Size]byte
	if readErr == nil {
		mine[0] = 1
		d := fileDigest(f)
		copy(mine[1:], d[:])
	}
	root := mine
	if err := s.BcastBytes(root[:], 0); err != nil {
		return fmt.Errorf("comparing %s with rank 0's: %w", path, err)
	}
	const (
		unread = 1
		differ = 2
	)
	flags := make([]float32, s.Size())
	switch {
	case readErr != nil:
		flags[s.Rank()] = unread
	case root[0] == 1 && root != mine:
		flags[s.Rank()] = differ
	}
	if err := s.AllReduceSum(flags); err != nil {
		return fmt.Errorf("comparing %s with rank 0's: %w", path, err)
	}
	var unreadBy, differBy []int
	for r, v := range flags {
		switch v {
		case unread:
			unreadBy = append(unreadBy, r)
		case differ:
			differBy = append(differBy, r)
		}
	}
	const fix = "every replica must read the same file: a filesystem all ranks share, or a copy on each machine; to load what rank 0 just saved, call the strategy's Barrier between the save and the load"
	switch {
	case readErr != nil:
		return fmt.Errorf("rank %d of %d: %w", s.Rank(), s.Size(), readErr)
	case flags[s.Rank()] == differ:
		return fmt.Errorf("rank %d of %d read other content from %s than rank 0 (SHA-256 %x here, %x on rank 0), so no replica loaded it; %s",
			s.Rank(), s.Size(), path, mine[1:9], root[1:9], fix)
	case len(unreadBy) > 0:
		return fmt.Errorf("ranks %v could not read %s (their errors say why), so no replica loaded it; %s", unreadBy, path, fix)
	case len(differBy) > 0:
		return fmt.Errorf("ranks %v read other content from %s than rank 0, so no replica loaded it; %s", differBy, path, fix)
	}
	return nil
}

// readAgreed reads the safetensors file src, on every replica of s (nil:
// this process alone), and checks that they all read the same.
func readAgreed(s Strategy, src fileSource, check func(map[string]string, []safetensors.Declared) error) (*safetensors.File, error) {
	f, err := src.read(check)
	if err := agreeOnFile(s, f, err, src.name); err != nil {
		return nil, err
	}
	return f, nil
}

// strategyOf is the strategy among compile options, nil for none.
func strategyOf(opts []CompileOption) Strategy {
	var cfg compileConfig
	for _, o := range opts {
		if o != nil && o(&cfg) != nil {
			return nil // Compile will say what is wrong
		}
	}
	return cfg.strategy
}
