// Package cifar10 loads the CIFAR-10 image classification dataset for
// gokeras, the way keras.datasets.cifar10.load_data does for Keras.
//
// CIFAR-10 has 60,000 colour images of 32×32 pixels in ten classes
// (airplane, automobile, bird, cat, deer, dog, frog, horse, ship, truck):
// 50,000 for training and 10,000 for testing.
//
// # Getting the data
//
// Load fetches the official binary archive on first use, checks its MD5,
// unpacks it into a cache directory and reads it; later calls read the cache.
//
//	ds, err := cifar10.Load(ctx, cifar10.Options{Progress: os.Stderr})
//
// The cache is $GOKERAS_HOME/datasets when GOKERAS_HOME is set and
// os.UserCacheDir()/gokeras/datasets otherwise (Options.CacheDir overrides
// both). The URL can be pointed at a mirror with Options.URL or the
// GOKERAS_CIFAR10_URL environment variable. A mirror that serves the
// official archive needs nothing else; one that repackaged it also needs
// its checksum, in Options.MD5 or GOKERAS_CIFAR10_MD5 (the variable is
// ignored for the official URL, whose archive always has to match
// OfficialMD5).
//
// On a machine without network, either copy cifar-10-binary.tar.gz into the
// cache directory (Load checks and unpacks it), or set Options.Path (the
// --data flag of the gokeras tools) to the archive, to the extracted
// cifar-10-batches-bin directory, or to the directory that contains it. To
// try things out without the data at all, use Synthetic or SyntheticHard
// (train --synthetic).
//
// Downloads resume from <cache>/cifar-10-binary.tar.gz.part (HTTP Range),
// never hang (Options.ConnectTimeout, StallTimeout, MinRate) and never fill
// the disk (at most the archive's known size, Options.Size, else the size
// announced, else 1 GiB). Nothing gets its final name before it is complete
// and checked, so a cut download or extraction never passes for a cache.
// Two processes must not download into the same cache at the same time.
//
// # Archives from elsewhere
//
// An archive read in place (Options.Path) or extracted into the cache is
// checked entry by entry, on each header, before anything is allocated or
// written for that entry: special files, links, absolute names and ".."
// elements, batch files of more than BatchRecords records and oversized
// text files are refused, naming the entry, the cause and the fix. Only the
// eight CIFAR-10 files are extracted, so memory and disk use never exceed
// the real dataset's, whatever the archive declares. The repository's
// docs/cifar10.md and docs/reliability.md give every message and promise.
//
// # Layout in memory
//
// A Split keeps the images as bytes, exactly as Keras does: Images holds
// Len() images of 32×32×3 bytes each, channels last (HWC), so the byte for
// image n, row r, column c, channel ch is at ((n*32+r)*32+c)*3+ch. The whole
// training split is 150 MB this way. Models want float32 in [0, 1]; rather
// than a 600 MB float copy, GatherInputs scales just the images of one batch:
//
//	x := make([]float32, len(batch)*cifar10.ImageSize)
//	err := ds.Train.GatherInputs(batch, x)
//
// Labels are class indices 0..9. Split.OneHot and Split.Sparse give views
// whose GatherLabels writes them as one-hot rows of ten floats (for
// categorical cross-entropy) or as one float per sample (for sparse
// categorical cross-entropy). Both views also gather inputs, so either can be
// handed to a training loop as the whole dataset.
//
// # The file format
//
// Each .bin batch is a run of 3,073-byte records: a label byte, then the
// red, green and blue planes of the image. The loader turns the planes into
// the HWC layout above and rejects a size that is not a whole number of
// records, more than BatchRecords (10,000) records, batch files of
// different lengths, and labels above 9.
//
// # Errors
//
// Errors name the file or URL at fault and say how to fix it. Callers can
// tell the kinds apart with errors.Is: ErrDownload (no network, a cut or
// stalled connection, an HTTP error; see also StatusError), ErrChecksum, ErrNotCIFAR10,
// ErrMissingFile and ErrCorrupt. A cancelled context shows up as
// context.Canceled or context.DeadlineExceeded.
//
// # Without the real data
//
// Synthetic makes a dataset of any size with the same shapes and class
// names, whose classes even a linear model learns within one epoch;
// SyntheticHard (train --synthetic) is learnable but hard, as CIFAR-10 is.
// Both are meant for tests, examples and benchmarks that cannot download
// 170 MB.
package cifar10
