package cifar10

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/datasets/cifar10/cifar10test"
)

// officialEntries returns the entries of a small copy laid out like the
// official archive, in the order TarGz writes them.
func officialEntries() []cifar10test.Entry {
	return cifar10test.Entries(cifar10test.Files(recordsPerFile), batchesDirName+"/")
}

// replaceEntry puts e in place of the entry named name.
func replaceEntry(t *testing.T, entries []cifar10test.Entry, name string, e cifar10test.Entry) []cifar10test.Entry {
	t.Helper()
	i := slices.IndexFunc(entries, func(old cifar10test.Entry) bool { return old.Name == name })
	if i < 0 {
		t.Fatalf("no entry %s", name)
	}
	entries[i] = e
	return entries
}

// moveLast makes the entry named name the last one, so that it can declare
// more data than follows it.
func moveLast(t *testing.T, entries []cifar10test.Entry, name string, e cifar10test.Entry) []cifar10test.Entry {
	t.Helper()
	entries = slices.DeleteFunc(entries, func(old cifar10test.Entry) bool { return old.Name == name })
	return append(entries, e)
}

// allocatedDuring returns the bytes the Go heap allocated while f ran.
func allocatedDuring(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestLoadRefusesCraftedArchives reads each archive in place (Options.Path,
// train --data) and extracts it into the cache (an archive placed there by
// hand, or downloaded from a mirror whose checksum matches). Both must
// refuse it with an error that names the member, the cause and the fix,
// without allocating or writing what the headers declare.
func TestLoadRefusesCraftedArchives(t *testing.T) {
	const dir = batchesDirName + "/"
	batch := func(file, records int) []byte { return cifar10test.Batch(file, records) }
	for _, tc := range []struct {
		name  string
		craft func(t *testing.T, entries []cifar10test.Entry) []cifar10test.Entry
		want  error
		say   []string
	}{
		{
			name: "sparse batch declaring 2^62 bytes",
			craft: func(t *testing.T, e []cifar10test.Entry) []cifar10test.Entry {
				return replaceEntry(t, e, dir+"data_batch_1.bin",
					cifar10test.Entry{Name: dir + "data_batch_1.bin", Data: batch(0, 1), SparseSize: 1 << 62})
			},
			want: ErrNotCIFAR10,
			say:  []string{"data_batch_1.bin", "sparse file declaring 4611686018427387904 bytes"},
		},
		{
			name: "sparse batch declaring 2^50 records",
			craft: func(t *testing.T, e []cifar10test.Entry) []cifar10test.Entry {
				return replaceEntry(t, e, dir+"data_batch_1.bin",
					cifar10test.Entry{Name: dir + "data_batch_1.bin", Data: batch(0, 1), SparseSize: RecordSize << 50})
			},
			want: ErrNotCIFAR10,
			say:  []string{"data_batch_1.bin", "sparse file declaring 3459890413727383552 bytes"},
		},
		{
			name: "sparse batch of 20,000 records",
			craft: func(t *testing.T, e []cifar10test.Entry) []cifar10test.Entry {
				return replaceEntry(t, e, dir+"data_batch_2.bin",
					cifar10test.Entry{Name: dir + "data_batch_2.bin", Data: batch(1, 1), SparseSize: 20000 * RecordSize})
			},
			want: ErrNotCIFAR10,
			say:  []string{"data_batch_2.bin", "sparse file declaring 61460000 bytes"},
		},
		{
			name: "sparse batch of the expected size",
			craft: func(t *testing.T, e []cifar10test.Entry) []cifar10test.Entry {
				return replaceEntry(t, e, dir+testFileName,
					cifar10test.Entry{Name: dir + testFileName, Data: batch(5, 1), SparseSize: recordsPerFile * RecordSize})
			},
			want: ErrNotCIFAR10,
			say:  []string{testFileName, "sparse file"},
		},
		{
			name: "sparse file under another name",
			craft: func(t *testing.T, e []cifar10test.Entry) []cifar10test.Entry {
				return append(e, cifar10test.Entry{Name: dir + "notes.bin", SparseSize: 1 << 40})
			},
			want: ErrNotCIFAR10,
			say:  []string{"notes.bin", "sparse file"},
		},
		{
			name: "batch declaring 20,000 records",
			craft: func(t *testing.T, e []cifar10test.Entry) []cifar10test.Entry {
				return moveLast(t, e, dir+testFileName,
					cifar10test.Entry{Name: dir + testFileName, Data: batch(5, 1), Size: 20000 * RecordSize})
			},
			want: ErrCorrupt,
			say:  []string{testFileName, "declares 61460000 bytes (20000 records)", "at most 10000 records"},
		},
		{
			name: "batch declaring 2^50 records",
			craft: func(t *testing.T, e []cifar10test.Entry) []cifar10test.Entry {
				return moveLast(t, e, dir+"data_batch_4.bin",
					cifar10test.Entry{Name: dir + "data_batch_4.bin", Data: batch(3, 1), Size: RecordSize << 50})
			},
			want: ErrCorrupt,
			say:  []string{"data_batch_4.bin", "at most 10000 records"},
		},
		{
			name: "readme declaring 1 GiB",
			craft: func(t *testing.T, e []cifar10test.Entry) []cifar10test.Entry {
				return moveLast(t, e, dir+readmeFileName,
					cifar10test.Entry{Name: dir + readmeFileName, Data: []byte("<html>"), Size: 1 << 30})
			},
			want: ErrNotCIFAR10,
			say:  []string{readmeFileName, "declares 1073741824 bytes"},
		},
		{
			name: "batches of different sizes",
			craft: func(t *testing.T, e []cifar10test.Entry) []cifar10test.Entry {
				return replaceEntry(t, e, dir+"data_batch_3.bin",
					cifar10test.Entry{Name: dir + "data_batch_3.bin", Data: batch(2, recordsPerFile-1)})
			},
			want: ErrCorrupt,
			say:  []string{"hold different numbers of records", "data_batch_2.bin: 100, data_batch_3.bin: 99,"},
		},
		{
			name: "symbolic link as a batch",
			craft: func(t *testing.T, e []cifar10test.Entry) []cifar10test.Entry {
				return replaceEntry(t, e, dir+"data_batch_1.bin",
					cifar10test.Entry{Name: dir + "data_batch_1.bin", Type: cifar10test.TypeSymlink, Linkname: "/etc/passwd"})
			},
			want: ErrNotCIFAR10,
			say:  []string{"data_batch_1.bin", `symbolic link to "/etc/passwd"`},
		},
		{
			name: "hard link as a batch",
			craft: func(t *testing.T, e []cifar10test.Entry) []cifar10test.Entry {
				return replaceEntry(t, e, dir+"data_batch_2.bin",
					cifar10test.Entry{Name: dir + "data_batch_2.bin", Type: cifar10test.TypeLink, Linkname: dir + "data_batch_1.bin"})
			},
			want: ErrNotCIFAR10,
			say:  []string{"data_batch_2.bin", "hard link to"},
		},
		{
			name: "symbolic link beside the files",
			craft: func(t *testing.T, e []cifar10test.Entry) []cifar10test.Entry {
				return append(e, cifar10test.Entry{Name: dir + "escape", Type: cifar10test.TypeSymlink, Linkname: "../../.."})
			},
			want: ErrNotCIFAR10,
			say:  []string{"escape", "symbolic link"},
		},
		{
			name: "character device",
			craft: func(t *testing.T, e []cifar10test.Entry) []cifar10test.Entry {
				return append(e, cifar10test.Entry{Name: dir + "null", Type: cifar10test.TypeChar})
			},
			want: ErrNotCIFAR10,
			say:  []string{"null", "character device"},
		},
		{
			name: "block device",
			craft: func(t *testing.T, e []cifar10test.Entry) []cifar10test.Entry {
				return append(e, cifar10test.Entry{Name: dir + "sda", Type: cifar10test.TypeBlock})
			},
			want: ErrNotCIFAR10,
			say:  []string{"sda", "block device"},
		},
		{
			name: "named pipe",
			craft: func(t *testing.T, e []cifar10test.Entry) []cifar10test.Entry {
				return append(e, cifar10test.Entry{Name: dir + "pipe", Type: cifar10test.TypeFifo})
			},
			want: ErrNotCIFAR10,
			say:  []string{"pipe", "named pipe"},
		},
		{
			name: "name with ..",
			craft: func(t *testing.T, e []cifar10test.Entry) []cifar10test.Entry {
				return append(e, cifar10test.Entry{Name: dir + "../../evil.txt", Data: []byte("x")})
			},
			want: ErrNotCIFAR10,
			say:  []string{"../../evil.txt", `".." element`},
		},
		{
			name: "batch under a name with ..",
			craft: func(t *testing.T, e []cifar10test.Entry) []cifar10test.Entry {
				return replaceEntry(t, e, dir+"data_batch_5.bin",
					cifar10test.Entry{Name: "../data_batch_5.bin", Data: batch(4, recordsPerFile)})
			},
			want: ErrNotCIFAR10,
			say:  []string{"../data_batch_5.bin", `".." element`},
		},
		{
			name: "absolute name",
			craft: func(t *testing.T, e []cifar10test.Entry) []cifar10test.Entry {
				return append(e, cifar10test.Entry{Name: "/tmp/evil.txt", Data: []byte("x")})
			},
			want: ErrNotCIFAR10,
			say:  []string{"/tmp/evil.txt", "absolute name"},
		},
		{
			name: "batch file twice",
			craft: func(t *testing.T, e []cifar10test.Entry) []cifar10test.Entry {
				return append(e, cifar10test.Entry{Name: "other/data_batch_2.bin", Data: batch(1, recordsPerFile)})
			},
			want: ErrNotCIFAR10,
			say:  []string{"data_batch_2.bin more than once"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			archive := cifar10test.Gzip(t, cifar10test.Tar(tc.craft(t, officialEntries())))
			check := func(t *testing.T, err error, fix string) {
				t.Helper()
				if !errors.Is(err, tc.want) {
					t.Fatalf("error %v, want %v", err, tc.want)
				}
				for _, want := range append(tc.say, "to fix: "+fix) {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not mention %q", err, want)
					}
				}
			}

			t.Run("in place", func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "bomb.tar.gz")
				cifar10test.WriteDir(t, filepath.Dir(path), map[string][]byte{"bomb.tar.gz": archive})
				var err error
				allocated := allocatedDuring(func() {
					_, err = Load(context.Background(), Options{Path: path, URL: failServer(t)})
				})
				check(t, err, "download "+archiveName+" again from "+OfficialURL)
				if allocated > 32<<20 {
					t.Errorf("refusing the archive allocated %d MB", allocated>>20)
				}
			})

			t.Run("extracted into the cache", func(t *testing.T) {
				cacheDir := t.TempDir()
				cifar10test.WriteDir(t, cacheDir, map[string][]byte{archiveName: archive})
				_, err := Load(context.Background(), Options{CacheDir: cacheDir, URL: failServer(t), MD5: cifar10test.MD5(archive)})
				check(t, err, "delete "+filepath.Join(cacheDir, archiveName))
				if got, want := cacheEntries(t, cacheDir), []string{archiveName}; !slices.Equal(got, want) {
					t.Errorf("cache holds %q, want only %q", got, want)
				}
			})
		})
	}
}

// TestLoadArchiveOddButSound checks that what the refusals must not catch
// still loads, in place and extracted: long names, a PAX global header,
// extra files, directories of their own.
func TestLoadArchiveOddButSound(t *testing.T) {
	long := strings.Repeat("d", 150) + "/" + strings.Repeat("n", 120)
	for _, tc := range []struct {
		name    string
		entries func() []cifar10test.Entry
	}{
		{"written by cifar10test.Tar", officialEntries},
		{"long directory name", func() []cifar10test.Entry {
			return cifar10test.Entries(cifar10test.Files(recordsPerFile), long+"/")
		}},
		{"extra file with a long name", func() []cifar10test.Entry {
			return append(officialEntries(), cifar10test.Entry{Name: batchesDirName + "/" + long + ".txt", Data: []byte("notes")})
		}},
		{"PAX global header and subdirectory", func() []cifar10test.Entry {
			return append([]cifar10test.Entry{
				{Name: "pax_global_header", Type: 'g', Data: []byte("52 comment=a global header as git archive writes it\n")},
				{Name: batchesDirName + "/sub/", Type: cifar10test.TypeDir},
			}, officialEntries()...)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			archive := cifar10test.Gzip(t, cifar10test.Tar(tc.entries()))
			dir := t.TempDir()
			cifar10test.WriteDir(t, dir, map[string][]byte{"copy.tar.gz": archive})
			ds, err := Load(context.Background(), Options{Path: filepath.Join(dir, "copy.tar.gz"), URL: failServer(t)})
			if err != nil {
				t.Fatal(err)
			}
			checkDataset(t, ds, recordsPerFile)

			cacheDir := t.TempDir()
			cifar10test.WriteDir(t, cacheDir, map[string][]byte{archiveName: archive})
			ds, err = Load(context.Background(), Options{CacheDir: cacheDir, URL: failServer(t), MD5: cifar10test.MD5(archive)})
			if err != nil {
				t.Fatal(err)
			}
			checkDataset(t, ds, recordsPerFile)
			extracted := cacheEntries(t, filepath.Join(cacheDir, batchesDirName))
			want := append(requiredFileNames(), readmeFileName)
			slices.Sort(want)
			if !slices.Equal(extracted, want) {
				t.Errorf("extracted %q, want %q", extracted, want)
			}
		})
	}
}
