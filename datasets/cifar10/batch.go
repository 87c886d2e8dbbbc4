package cifar10

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Names inside the official archive.
const (
	batchesDirName = "cifar-10-batches-bin"
	archiveName    = "cifar-10-binary.tar.gz"
	metaFileName   = "batches.meta.txt"
	testFileName   = "test_batch.bin"
	readmeFileName = "readme.html"

	// maxMetaSize bounds batches.meta.txt (the real one is 61 bytes) and
	// readme.html (88 bytes): larger ones are refused before they are read or
	// extracted.
	maxMetaSize = 64 << 10

	// BatchRecords is the number of records in each batch file of the
	// official archive. No batch file may hold more; smaller copies (made
	// for tests) hold fewer, the same number in every file.
	BatchRecords = 10000
)

// trainFileNames returns the training batch files in the order their records
// make up Dataset.Train.
func trainFileNames() []string {
	return []string{
		"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
		"data_batch_4.bin", "data_batch_5.bin",
	}
}

// isDatasetFileName reports whether name is the base name of a file that a
// complete cifar-10-batches-bin directory holds.
func isDatasetFileName(name string) bool {
	switch name {
	case testFileName, metaFileName, readmeFileName:
		return true
	}
	for _, train := range trainFileNames() {
		if name == train {
			return true
		}
	}
	return false
}

// recordCount returns how many records a batch file of size bytes holds, or
// an ErrCorrupt error when size is not a positive multiple of RecordSize or
// is larger than BatchRecords records. It is checked before anything is
// allocated or written for the file, so a size declared by a crafted archive
// can cost no more memory or disk than the official file does.
func recordCount(name string, size int64) (int, error) {
	if size <= 0 || size%RecordSize != 0 {
		return 0, fmt.Errorf("%w: %s is %d bytes, not a positive multiple of the %d-byte record: "+
			"the file is truncated or is not a CIFAR-10 binary batch", ErrCorrupt, name, size, RecordSize)
	}
	if size > BatchRecords*RecordSize {
		return 0, fmt.Errorf("%w: %s declares %d bytes (%d records); a CIFAR-10 batch file holds at most %d records "+
			"(%d bytes in the official archive)", ErrCorrupt, name, size, size/RecordSize, BatchRecords, BatchRecords*RecordSize)
	}
	return int(size / RecordSize), nil
}

// decodeRecords reads len(labels) records from r, checks each label and
// writes it to labels, and writes each image, transposed from the file's
// planar CHW layout to HWC, to images (which holds len(labels)*ImageSize
// bytes). name is used in errors; record numbers in errors count from 0
// within the file.
func decodeRecords(r io.Reader, images, labels []uint8, name string) error {
	if len(images) != len(labels)*ImageSize {
		return fmt.Errorf("decoding %s: %d image bytes for %d labels", name, len(images), len(labels))
	}
	const chunkRecords = 256 // about 0.8 MB read at a time
	buf := make([]byte, min(chunkRecords, len(labels))*RecordSize)
	for done := 0; done < len(labels); {
		count := min(chunkRecords, len(labels)-done)
		chunk := buf[:count*RecordSize]
		if n, err := io.ReadFull(r, chunk); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				got := int64(done)*RecordSize + int64(n)
				return fmt.Errorf("%w: %s ended after %d bytes, want %d: the file is truncated",
					ErrCorrupt, name, got, int64(len(labels))*RecordSize)
			}
			return fmt.Errorf("reading %s: %w", name, err)
		}
		for i := range count {
			record := chunk[i*RecordSize : (i+1)*RecordSize]
			index := done + i
			if record[0] >= NumClasses {
				return fmt.Errorf("%w: %s record %d has label %d, want 0..%d: the file is damaged or is not a CIFAR-10 batch",
					ErrCorrupt, name, index, record[0], NumClasses-1)
			}
			labels[index] = record[0]
			planarToInterleaved(images[index*ImageSize:(index+1)*ImageSize], record[1:])
		}
		done += count
	}
	return nil
}

// planarToInterleaved turns one image stored as three 32×32 planes (all red,
// then all green, then all blue) into channels-last order:
// dst[(row*32+col)*3+ch] = src[ch*1024+row*32+col].
func planarToInterleaved(dst, src []uint8) {
	const plane = Height * Width
	red, green, blue := src[:plane], src[plane:2*plane], src[2*plane:3*plane]
	dst = dst[:ImageSize]
	for p := range plane {
		px := dst[p*Channels : p*Channels+Channels]
		px[0], px[1], px[2] = red[p], green[p], blue[p]
	}
}

// parseClassNames reads batches.meta.txt: one class name per line, ten lines,
// optionally followed by blank lines. Surrounding spaces and carriage returns
// are dropped.
func parseClassNames(name string, text []byte) ([]string, error) {
	lines := strings.Split(string(bytes.ReplaceAll(text, []byte("\r"), nil)), "\n")
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	names := make([]string, 0, NumClasses)
	for i, line := range lines {
		line = strings.TrimSpace(line)
		if line == "" {
			return nil, fmt.Errorf("%w: %s line %d is blank; want one class name per line", ErrNotCIFAR10, name, i+1)
		}
		names = append(names, line)
	}
	if len(names) != NumClasses {
		return nil, fmt.Errorf("%w: %s lists %d class names, want %d", ErrNotCIFAR10, name, len(names), NumClasses)
	}
	return names, nil
}

// batchFile is one batch file's place in a split.
type batchFile struct {
	name    string
	records int
	first   int // index in the split of the file's first record
}

// splitPlan says which files make up a split and where each one's records go.
type splitPlan struct {
	files   []batchFile
	records int
}

// planSplit lays out the split made of the named files in order, given the
// byte sizes of the files present (keyed by base name). where names the
// directory or archive for errors.
func planSplit(names []string, sizes map[string]int64, where string) (splitPlan, error) {
	var plan splitPlan
	for _, name := range names {
		size, ok := sizes[name]
		if !ok {
			return splitPlan{}, fmt.Errorf("%w: %s has no %s", ErrMissingFile, where, name)
		}
		n, err := recordCount(name, size)
		if err != nil {
			return splitPlan{}, err
		}
		plan.files = append(plan.files, batchFile{name: name, records: n, first: plan.records})
		plan.records += n
	}
	return plan, nil
}

// allocate makes a Split with room for every record of the plan.
func (p splitPlan) allocate() Split {
	return Split{
		Images: make([]uint8, p.records*ImageSize),
		Labels: make([]uint8, p.records),
	}
}

// region returns the parts of s that file f's records fill.
func region(s *Split, f batchFile) (images, labels []uint8) {
	end := f.first + f.records
	return s.Images[f.first*ImageSize : end*ImageSize], s.Labels[f.first:end]
}
