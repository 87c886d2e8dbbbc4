package cifar10

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/datasets/cifar10/cifar10test"
)

// The seed corpora of the fuzz targets are committed under
// testdata/fuzz/<target>/, one file per seed, made from the functions
// below. TestFuzzCorpusCommitted checks that they match; after changing a
// seed, rewrite them with
//
//	GOKERAS_WRITE_FUZZ_CORPUS=1 go test -run TestFuzzCorpusCommitted ./datasets/cifar10

// batchFuzzSeeds returns the seeds of FuzzParseBatch: batch files, good
// and bad.
func batchFuzzSeeds() map[string][]byte {
	badLabel := cifar10test.Batch(4, 2)
	badLabel[RecordSize] = 10
	return map[string][]byte{
		"one-record":       cifar10test.Batch(0, 1),
		"two-records":      cifar10test.Batch(3, 2),
		"empty":            {},
		"label-only":       {9},
		"one-byte-over":    append(cifar10test.Batch(1, 1), 0),
		"one-byte-short":   cifar10test.Batch(2, 2)[:2*RecordSize-1],
		"label-10-in-2nd":  badLabel,
		"label-255-in-1st": append([]byte{255}, cifar10test.Batch(5, 1)[1:]...),
	}
}

// archiveFuzzSeeds returns the seeds of FuzzReadArchive: uncompressed tar
// streams, a sound small copy and the crafted ones the reader must refuse
// (sparse files, links, devices, long and escaping names, declared sizes
// that the data does not back, a stream cut short).
func archiveFuzzSeeds() map[string][]byte {
	const dir = batchesDirName + "/"
	sound := cifar10test.Entries(cifar10test.Files(1), dir)
	withMeta := func(entries ...cifar10test.Entry) []byte {
		return cifar10test.Tar(append([]cifar10test.Entry{
			{Name: dir, Type: cifar10test.TypeDir},
			{Name: dir + metaFileName, Data: cifar10test.MetaText()},
		}, entries...))
	}
	whole := cifar10test.Tar(sound)
	cut := bytes.Index(whole, []byte("data_batch_3.bin"))
	return map[string][]byte{
		"sound":           whole,
		"cut-in-batch-3":  whole[:cut+512+RecordSize/2],
		"empty":           {},
		"trailer-only":    make([]byte, 1024),
		"sparse-2p62":     withMeta(cifar10test.Entry{Name: dir + "data_batch_1.bin", Data: cifar10test.Batch(0, 1), SparseSize: 1 << 62}),
		"sparse-20000":    withMeta(cifar10test.Entry{Name: dir + testFileName, SparseSize: 20000 * RecordSize}),
		"symlink-batch":   withMeta(cifar10test.Entry{Name: dir + "data_batch_1.bin", Type: cifar10test.TypeSymlink, Linkname: "/etc/passwd"}),
		"hardlink-batch":  withMeta(cifar10test.Entry{Name: dir + "data_batch_2.bin", Type: cifar10test.TypeLink, Linkname: dir + metaFileName}),
		"char-device":     withMeta(cifar10test.Entry{Name: dir + "null", Type: cifar10test.TypeChar}),
		"dotdot-name":     withMeta(cifar10test.Entry{Name: dir + "../../data_batch_1.bin", Data: cifar10test.Batch(0, 1)}),
		"absolute-name":   withMeta(cifar10test.Entry{Name: "/etc/" + readmeFileName, Data: []byte("x")}),
		"long-names":      withMeta(cifar10test.Entry{Name: dir + strings.Repeat("n", 300) + "/" + testFileName, Data: cifar10test.Batch(5, 1)}, cifar10test.Entry{Name: dir + "l", Type: cifar10test.TypeSymlink, Linkname: strings.Repeat("t", 200)}),
		"declares-more":   withMeta(cifar10test.Entry{Name: dir + "data_batch_5.bin", Data: cifar10test.Batch(4, 1), Size: 2 * RecordSize}),
		"declares-2p50":   withMeta(cifar10test.Entry{Name: dir + "data_batch_5.bin", Size: RecordSize << 50}),
		"huge-meta":       cifar10test.Tar([]cifar10test.Entry{{Name: metaFileName, Data: cifar10test.MetaText(), Size: 1 << 40}}),
		"old-gnu-sparse":  withMeta(cifar10test.Entry{Name: dir + "data_batch_1.bin", Type: 'S', Data: cifar10test.Batch(0, 1)}),
		"global-header":   cifar10test.Tar(append([]cifar10test.Entry{{Name: "pax_global_header", Type: 'g', Data: []byte("16 comment=seed\n")}}, cifar10test.Entry{Name: metaFileName, Data: cifar10test.MetaText()})),
		"duplicate-batch": withMeta(cifar10test.Entry{Name: dir + testFileName, Data: cifar10test.Batch(5, 1)}, cifar10test.Entry{Name: "x/" + testFileName, Data: cifar10test.Batch(5, 1)}),
	}
}

// FuzzReadArchive feeds the archive reader arbitrary tar streams (the part
// of a .tar.gz under the gzip layer, which package gzip checks). It must
// not panic or fail with an error outside the package's classes; every file
// it hands on for extraction must be a CIFAR-10 file within its size limit,
// with exactly the bytes its header declares; and what it accepts must be a
// dataset no larger than CIFAR-10, the same as the files extraction would
// write. The loop stays in memory (extracting to disk every time makes
// fuzzing crawl); TestLoadRefusesCraftedArchives extracts the crafted
// archives for real.
func FuzzReadArchive(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx := context.Background()
		walk := func(ctx context.Context, visit visitFunc) error {
			return walkTar(ctx, "fuzz.tar", bytes.NewReader(data), visit)
		}
		// What extractArchive would write: each visited file, read whole.
		files := make(map[string][]byte)
		walkErr := walk(ctx, func(name string, size int64, r io.Reader) error {
			limit := int64(BatchRecords * RecordSize)
			if name == metaFileName || name == readmeFileName {
				limit = maxMetaSize
			}
			if !isDatasetFileName(name) || size > limit {
				t.Fatalf("handed on %q of %d bytes for extraction", name, size)
			}
			content, err := io.ReadAll(r)
			if err != nil {
				return err
			}
			if int64(len(content)) != size {
				t.Fatalf("%s delivered %d bytes, its header declares %d", name, len(content), size)
			}
			files[name] = content
			return nil
		})
		checkOutcome(t, "walking", nil, walkErr)

		ds, err := readArchive(ctx, "fuzz.tar", walk)
		checkOutcome(t, "reading in place", ds, err)
		if err != nil {
			return
		}
		if walkErr != nil {
			t.Fatalf("read in place, but a walk that reads every file fails: %v", walkErr)
		}
		extracted, err := datasetFromFiles(files)
		checkOutcome(t, "reading what extraction writes", extracted, err)
		if err != nil {
			t.Fatalf("read in place, but not from what extraction writes: %v", err)
		}
		if !bytes.Equal(ds.Train.Images, extracted.Train.Images) || !bytes.Equal(ds.Train.Labels, extracted.Train.Labels) ||
			!bytes.Equal(ds.Test.Images, extracted.Test.Images) || !bytes.Equal(ds.Test.Labels, extracted.Test.Labels) ||
			!slices.Equal(ds.ClassNames, extracted.ClassNames) {
			t.Fatal("the archive read in place differs from what extraction writes")
		}
	})
}

// datasetFromFiles reads a cifar-10-batches-bin directory held in memory
// the way readDir reads one on disk.
func datasetFromFiles(files map[string][]byte) (*Dataset, error) {
	sizes := make(map[string]int64)
	for name, content := range files {
		sizes[name] = int64(len(content))
	}
	train, test, err := planDataset(sizes, "memory")
	if err != nil {
		return nil, err
	}
	names, err := parseClassNames(metaFileName, files[metaFileName])
	if err != nil {
		return nil, err
	}
	ds := &Dataset{Train: train.allocate(), Test: test.allocate(), ClassNames: names}
	for _, part := range []struct {
		plan  splitPlan
		split *Split
	}{{train, &ds.Train}, {test, &ds.Test}} {
		for _, file := range part.plan.files {
			images, labels := region(part.split, file)
			if err := decodeRecords(bytes.NewReader(files[file.name]), images, labels, file.name); err != nil {
				return nil, err
			}
		}
	}
	return ds, nil
}

// checkOutcome checks what a read of fuzzed data gave: an error of one of
// the package's classes, or a well-formed dataset no larger than CIFAR-10.
func checkOutcome(t *testing.T, what string, ds *Dataset, err error) {
	t.Helper()
	if err != nil {
		if !errors.Is(err, ErrNotCIFAR10) && !errors.Is(err, ErrMissingFile) && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s: error %v is of no class", what, err)
		}
		return
	}
	if ds == nil {
		return
	}
	n := ds.Test.Len()
	if n < 1 || n > BatchRecords || ds.Train.Len() != 5*n {
		t.Fatalf("%s: %d train and %d test samples", what, ds.Train.Len(), n)
	}
	for _, s := range []*Split{&ds.Train, &ds.Test} {
		if err := s.check(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for i, label := range s.Labels {
			if label >= NumClasses {
				t.Fatalf("%s: label %d of sample %d", what, label, i)
			}
		}
	}
	if len(ds.ClassNames) != NumClasses {
		t.Fatalf("%s: %d class names", what, len(ds.ClassNames))
	}
}

func TestFuzzCorpusCommitted(t *testing.T) {
	write := os.Getenv("GOKERAS_WRITE_FUZZ_CORPUS") == "1"
	for target, seeds := range map[string]map[string][]byte{
		"FuzzParseBatch":  batchFuzzSeeds(),
		"FuzzReadArchive": archiveFuzzSeeds(),
	} {
		dir := filepath.Join("testdata", "fuzz", target)
		for name, seed := range seeds {
			p := filepath.Join(dir, name)
			want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", seed)
			if write {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(want), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			got, err := os.ReadFile(p)
			if err != nil {
				t.Errorf("seed %s: %v; write the corpus with GOKERAS_WRITE_FUZZ_CORPUS=1", p, err)
				continue
			}
			if !bytes.Equal(got, []byte(want)) {
				t.Errorf("seed %s differs from the one %s's seeds make now; rewrite the corpus with GOKERAS_WRITE_FUZZ_CORPUS=1", p, target)
			}
		}
	}
}
