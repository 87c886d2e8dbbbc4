package cifar10

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// requiredFileNames lists the files Load reads from a cifar-10-batches-bin
// directory or archive.
func requiredFileNames() []string {
	return append(trainFileNames(), testFileName, metaFileName)
}

// planDataset checks that every required file is present with a plausible
// size and lays out both splits.
func planDataset(sizes map[string]int64, where string) (train, test splitPlan, err error) {
	for _, name := range requiredFileNames() {
		if _, ok := sizes[name]; !ok {
			return splitPlan{}, splitPlan{}, fmt.Errorf("%w: %s has no %s", ErrMissingFile, where, name)
		}
	}
	if sizes[metaFileName] > maxMetaSize {
		return splitPlan{}, splitPlan{}, fmt.Errorf("%w: %s in %s is %d bytes; the real one lists ten class names",
			ErrNotCIFAR10, metaFileName, where, sizes[metaFileName])
	}
	if train, err = planSplit(trainFileNames(), sizes, where); err != nil {
		return splitPlan{}, splitPlan{}, err
	}
	if test, err = planSplit([]string{testFileName}, sizes, where); err != nil {
		return splitPlan{}, splitPlan{}, err
	}
	return train, test, nil
}

// withFix appends a remedy to errors that describe bad data, and leaves
// others (I/O failures, cancellation) as they are.
func withFix(err error, fix string) error {
	if errors.Is(err, ErrCorrupt) || errors.Is(err, ErrMissingFile) || errors.Is(err, ErrNotCIFAR10) {
		return fmt.Errorf("%w; to fix: %s", err, fix)
	}
	return err
}

// findBatchesDir returns dir itself when it holds CIFAR-10 files, or its
// cifar-10-batches-bin subdirectory when that exists.
func findBatchesDir(dir string) (string, error) {
	sizes, err := statDatasetFiles(dir)
	if err != nil {
		return "", err
	}
	if len(sizes) > 0 {
		return dir, nil
	}
	sub := filepath.Join(dir, batchesDirName)
	if info, err := os.Stat(sub); err == nil && info.IsDir() {
		return sub, nil
	}
	return "", fmt.Errorf("%w: %s holds neither the batch files (data_batch_1.bin … data_batch_5.bin, test_batch.bin, %s) "+
		"nor a %s directory; to fix: point the path at the extracted %s directory, its parent, or %s",
		ErrNotCIFAR10, dir, metaFileName, batchesDirName, batchesDirName, archiveName)
}

// statDatasetFiles returns the sizes of the required files present in dir.
func statDatasetFiles(dir string) (map[string]int64, error) {
	sizes := make(map[string]int64)
	for _, name := range requiredFileNames() {
		p := filepath.Join(dir, name)
		info, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return nil, err
		case !info.Mode().IsRegular():
			return nil, fmt.Errorf("%w: %s is not a regular file", ErrNotCIFAR10, p)
		}
		sizes[name] = info.Size()
	}
	return sizes, nil
}

// loadDir reads an extracted cifar-10-batches-bin directory. fix tells the
// user how to repair bad data found there.
func loadDir(ctx context.Context, dir, fix string) (*Dataset, error) {
	ds, err := readDir(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("cifar10: loading %s: %w", dir, withFix(err, fix))
	}
	return ds, nil
}

func readDir(ctx context.Context, dir string) (*Dataset, error) {
	sizes, err := statDatasetFiles(dir)
	if err != nil {
		return nil, err
	}
	if len(sizes) == 0 {
		return nil, fmt.Errorf("%w: %s holds none of the CIFAR-10 batch files", ErrNotCIFAR10, dir)
	}
	train, test, err := planDataset(sizes, dir)
	if err != nil {
		return nil, err
	}
	metaText, err := os.ReadFile(filepath.Join(dir, metaFileName))
	if err != nil {
		return nil, err
	}
	names, err := parseClassNames(metaFileName, metaText)
	if err != nil {
		return nil, err
	}
	ds := &Dataset{Train: train.allocate(), Test: test.allocate(), ClassNames: names}
	for _, part := range []struct {
		plan  splitPlan
		split *Split
	}{{train, &ds.Train}, {test, &ds.Test}} {
		for _, file := range part.plan.files {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			images, labels := region(part.split, file)
			if err := readBatchFile(filepath.Join(dir, file.name), images, labels); err != nil {
				return nil, err
			}
		}
	}
	return ds, nil
}

func readBatchFile(p string, images, labels []uint8) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	return decodeRecords(f, images, labels, filepath.Base(p))
}

// visitFunc receives one CIFAR-10 file found in an archive, by base name,
// with its size and a reader for its content.
type visitFunc func(name string, size int64, r io.Reader) error

// walkArchive streams through a .tar.gz and calls visit for each regular file
// whose base name is one a cifar-10-batches-bin directory holds. It reads the
// stream to the end, so the gzip checksum is always verified.
func walkArchive(ctx context.Context, archivePath string, visit visitFunc) error {
	f, err := os.Open(archivePath)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, gzip.ErrHeader) {
			return fmt.Errorf("%w: %s is not a gzip-compressed tar archive (%v)", ErrNotCIFAR10, archivePath, err)
		}
		return fmt.Errorf("reading %s: %w", archivePath, err)
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	seen := make(map[string]bool)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%w: reading %s: %w: the archive is truncated or damaged", ErrCorrupt, archivePath, err)
		}
		name := path.Base(hdr.Name)
		if hdr.Typeflag != tar.TypeReg || !isDatasetFileName(name) {
			continue
		}
		if seen[name] {
			return fmt.Errorf("%w: %s holds %s more than once", ErrNotCIFAR10, archivePath, name)
		}
		seen[name] = true
		if err := visit(name, hdr.Size, tr); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				err = fmt.Errorf("%w: %w", ErrCorrupt, err)
			}
			return err
		}
	}
	// Drain what follows the tar trailer so gzip checks its CRC and length.
	if _, err := io.Copy(io.Discard, gz); err != nil {
		return fmt.Errorf("%w: reading %s: %w: the archive is truncated or damaged", ErrCorrupt, archivePath, err)
	}
	if len(seen) == 0 {
		return fmt.Errorf("%w: %s holds none of the CIFAR-10 batch files", ErrNotCIFAR10, archivePath)
	}
	return nil
}

// loadArchive reads the dataset straight out of a .tar.gz without
// extracting it. It streams the archive twice: once to learn the file sizes
// (so the final slices are allocated exactly once), once to decode the
// records into them. fix tells the user how to repair bad data.
func loadArchive(ctx context.Context, archivePath, fix string) (*Dataset, error) {
	ds, err := readArchive(ctx, archivePath)
	if err != nil {
		return nil, fmt.Errorf("cifar10: loading %s: %w", archivePath, withFix(err, fix))
	}
	return ds, nil
}

func readArchive(ctx context.Context, archivePath string) (*Dataset, error) {
	sizes := make(map[string]int64)
	var metaText []byte
	err := walkArchive(ctx, archivePath, func(name string, size int64, r io.Reader) error {
		sizes[name] = size
		if name != metaFileName || size > maxMetaSize {
			return nil
		}
		var err error
		metaText, err = io.ReadAll(r)
		return err
	})
	if err != nil {
		return nil, err
	}
	train, test, err := planDataset(sizes, archivePath)
	if err != nil {
		return nil, err
	}
	names, err := parseClassNames(metaFileName, metaText)
	if err != nil {
		return nil, err
	}
	ds := &Dataset{Train: train.allocate(), Test: test.allocate(), ClassNames: names}
	type target struct {
		split *Split
		file  batchFile
	}
	targets := make(map[string]target)
	for _, file := range train.files {
		targets[file.name] = target{&ds.Train, file}
	}
	for _, file := range test.files {
		targets[file.name] = target{&ds.Test, file}
	}
	err = walkArchive(ctx, archivePath, func(name string, size int64, r io.Reader) error {
		t, ok := targets[name]
		if !ok {
			return nil
		}
		if size != sizes[name] {
			return fmt.Errorf("%w: %s changed size while being read", ErrCorrupt, name)
		}
		images, labels := region(t.split, t.file)
		return decodeRecords(r, images, labels, name)
	})
	if err != nil {
		return nil, err
	}
	return ds, nil
}
