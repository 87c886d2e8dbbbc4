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
	"slices"
	"strconv"
	"strings"
)

// requiredFileNames lists the files Load reads from a cifar-10-batches-bin
// directory or archive.
func requiredFileNames() []string {
	return append(trainFileNames(), testFileName, metaFileName)
}

// planDataset checks that every required file is present with a plausible
// size and lays out both splits. Every batch file must hold the same number
// of records, at most BatchRecords, as the official files do; so the splits
// it lays out are never larger than the real dataset.
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
	files := append(slices.Clone(train.files), test.files...)
	if slices.ContainsFunc(files, func(f batchFile) bool { return f.records != files[0].records }) {
		counts := make([]string, len(files))
		for i, f := range files {
			counts[i] = fmt.Sprintf("%s: %d", f.name, f.records)
		}
		return splitPlan{}, splitPlan{}, fmt.Errorf("%w: the batch files in %s hold different numbers of records (%s); "+
			"each holds the same number (%d in the official archive)", ErrCorrupt, where, strings.Join(counts, ", "), BatchRecords)
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
// with its size and a reader for its content. walkTar has checked the entry
// (see checkEntry) before it calls visit.
type visitFunc func(name string, size int64, r io.Reader) error

// walkFunc streams through an archive and calls visit for each CIFAR-10
// file in it. readArchive and extractArchive take one, so that tests and
// fuzz targets can feed them an archive held in memory.
type walkFunc func(ctx context.Context, visit visitFunc) error

// archiveFile returns the walkFunc of the .tar.gz at archivePath.
func archiveFile(archivePath string) walkFunc {
	return func(ctx context.Context, visit visitFunc) error {
		return walkArchive(ctx, archivePath, visit)
	}
}

// walkArchive streams through the .tar.gz at archivePath (see walkTar). It
// reads the stream to the end, so the gzip checksum is always verified.
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
	stream := &ctxReader{ctx: ctx, r: gz}
	if err := walkTar(ctx, archivePath, stream, visit); err != nil {
		return err
	}
	// Drain what follows the tar trailer so gzip checks its CRC and length.
	if _, err := io.Copy(io.Discard, stream); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		return fmt.Errorf("%w: reading %s: %w: the archive is truncated or damaged", ErrCorrupt, archivePath, err)
	}
	return nil
}

// ctxReader fails reads once ctx ends, so that cancelling stops a walk even
// in the middle of a long entry that is being skipped.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// walkTar reads the uncompressed tar stream r, checks every entry's header
// with checkEntry, and calls visit for each regular file whose base name is
// one a cifar-10-batches-bin directory holds. where names the archive in
// errors.
//
// Every check happens on the header, before the entry's data is read, and
// before visit can allocate or write anything for it.
func walkTar(ctx context.Context, where string, r io.Reader, visit visitFunc) error {
	tr := tar.NewReader(r)
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
			if ctxErr := ctx.Err(); ctxErr != nil {
				return ctxErr
			}
			return fmt.Errorf("%w: reading %s: %w: the archive is truncated or damaged", ErrCorrupt, where, err)
		}
		name, wanted, err := checkEntry(hdr)
		if err != nil {
			return err // the caller's error names the archive
		}
		if !wanted {
			continue
		}
		if seen[name] {
			return fmt.Errorf("%w: %s holds %s more than once", ErrNotCIFAR10, where, name)
		}
		seen[name] = true
		if err := visit(name, hdr.Size, tr); err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return ctxErr
			}
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, tar.ErrHeader) {
				err = fmt.Errorf("%w: %w", ErrCorrupt, err)
			}
			return err
		}
	}
	if len(seen) == 0 {
		return fmt.Errorf("%w: %s holds none of the CIFAR-10 batch files", ErrNotCIFAR10, where)
	}
	return nil
}

// notOfficial is the cause given for an entry the official archive never
// has.
const notOfficial = "the official archive holds only a directory and regular files"

// checkEntry checks one tar header. It refuses what the official archive
// never holds and what could make reading or extracting it costly or
// unsafe: links, devices and other special files, sparse files (whose
// declared size costs nothing to fake), absolute names, names with a ".."
// element, and a CIFAR-10 file whose declared size is beyond what that file
// can be. It returns the entry's base name and whether it is a CIFAR-10 file
// to visit; other directories and regular files are skipped.
func checkEntry(hdr *tar.Header) (name string, wanted bool, err error) {
	if err := checkEntryName(hdr.Name); err != nil {
		return "", false, err
	}
	quoted := strconv.Quote(hdr.Name)
	if isSparse(hdr) {
		return "", false, fmt.Errorf("%w: entry %s is a sparse file declaring %d bytes; %s",
			ErrNotCIFAR10, quoted, hdr.Size, notOfficial)
	}
	switch hdr.Typeflag {
	case tar.TypeReg:
	case tar.TypeDir, tar.TypeXGlobalHeader:
		return "", false, nil
	case tar.TypeSymlink, tar.TypeLink:
		return "", false, fmt.Errorf("%w: entry %s is a %s to %q; %s",
			ErrNotCIFAR10, quoted, entryKind(hdr.Typeflag), hdr.Linkname, notOfficial)
	default:
		return "", false, fmt.Errorf("%w: entry %s is a %s; %s", ErrNotCIFAR10, quoted, entryKind(hdr.Typeflag), notOfficial)
	}
	name = path.Base(hdr.Name)
	if !isDatasetFileName(name) {
		return name, false, nil
	}
	switch name {
	case metaFileName, readmeFileName:
		if hdr.Size > maxMetaSize {
			return "", false, fmt.Errorf("%w: entry %s declares %d bytes; the official %s is under 100 bytes",
				ErrNotCIFAR10, quoted, hdr.Size, name)
		}
	default:
		if _, err := recordCount(name, hdr.Size); err != nil {
			return "", false, err
		}
	}
	return name, true, nil
}

// checkEntryName refuses an absolute name or one with a ".." element, in
// either slash direction.
func checkEntryName(name string) error {
	clean := strings.ReplaceAll(name, `\`, "/")
	switch {
	case name == "":
		return fmt.Errorf("%w: an entry has an empty name; %s", ErrNotCIFAR10, notOfficial)
	case strings.HasPrefix(clean, "/") || (len(clean) >= 2 && clean[1] == ':'):
		return fmt.Errorf("%w: entry %q has an absolute name; the official archive's names are relative", ErrNotCIFAR10, name)
	case slices.Contains(strings.Split(clean, "/"), ".."):
		return fmt.Errorf("%w: entry %q has a \"..\" element; the official archive's names stay inside it", ErrNotCIFAR10, name)
	}
	return nil
}

// isSparse reports whether hdr is a GNU sparse file in any of its formats:
// the old GNU one (type 'S') or the PAX ones (GNU.sparse.* records, which
// package tar turns into a regular-looking entry with the logical size).
func isSparse(hdr *tar.Header) bool {
	if hdr.Typeflag == tar.TypeGNUSparse {
		return true
	}
	for key := range hdr.PAXRecords {
		if strings.HasPrefix(key, "GNU.sparse.") {
			return true
		}
	}
	return false
}

// entryKind names a tar entry type in words.
func entryKind(typeflag byte) string {
	switch typeflag {
	case tar.TypeSymlink:
		return "symbolic link"
	case tar.TypeLink:
		return "hard link"
	case tar.TypeChar:
		return "character device"
	case tar.TypeBlock:
		return "block device"
	case tar.TypeFifo:
		return "named pipe"
	case tar.TypeCont:
		return "contiguous file"
	case tar.TypeGNUSparse:
		return "sparse file"
	}
	return fmt.Sprintf("entry of type %q", typeflag)
}

// loadArchive reads the dataset straight out of a .tar.gz without
// extracting it. fix tells the user how to repair bad data.
func loadArchive(ctx context.Context, archivePath, fix string) (*Dataset, error) {
	ds, err := readArchive(ctx, archivePath, archiveFile(archivePath))
	if err != nil {
		return nil, fmt.Errorf("cifar10: loading %s: %w", archivePath, withFix(err, fix))
	}
	return ds, nil
}

// readArchive reads the dataset from the archive walk streams, where names
// it in errors. It streams the archive twice: once to check every entry and
// learn the file sizes (so the final slices are allocated exactly once, and
// only when the whole archive is sound), once to decode the records into
// them.
func readArchive(ctx context.Context, where string, walk walkFunc) (*Dataset, error) {
	sizes := make(map[string]int64)
	var metaText []byte
	err := walk(ctx, func(name string, size int64, r io.Reader) error {
		sizes[name] = size
		if name != metaFileName {
			return nil
		}
		var err error
		metaText, err = io.ReadAll(io.LimitReader(r, maxMetaSize))
		return err
	})
	if err != nil {
		return nil, err
	}
	train, test, err := planDataset(sizes, where)
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
	err = walk(ctx, func(name string, size int64, r io.Reader) error {
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
