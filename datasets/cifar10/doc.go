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
// try things out without the data at all, use Synthetic (train --synthetic).
//
// Downloads resume: an interrupted transfer leaves
// <cache>/cifar-10-binary.tar.gz.part behind, and the next Load continues it
// with an HTTP Range request when the server allows (and starts over when it
// does not). Nothing under the final names is written until it is complete
// and checked, so a cut download or extraction never passes for a cache.
// Two processes must not download into the same cache at the same time.
//
// Downloads never hang: a server that does not answer a request within
// Options.ConnectTimeout (default 30 s), or that sends nothing for
// Options.StallTimeout (default 60 s) in the middle of the archive, or less
// than Options.MinRate (default 1 KiB a second) over a StallTimeout, makes
// Load drop the connection. A download that had made progress then resumes
// from its .part file with a new request, up to three attempts in one Load;
// the error after the last one says where the partial file is kept.
//
// Downloads never fill the disk: the archive is at most its known size
// (Options.Size, CIFAR-10's own for the official checksum), else the size
// the server announces, else 1 GiB. A server that announces or sends more
// is refused, and its partial file removed.
//
// # Archives from elsewhere
//
// An archive read in place (Options.Path) or extracted into the cache is
// checked entry by entry, on each header, before anything is allocated or
// written for that entry. Load refuses, naming the entry, the cause and the
// fix: sparse files (whose declared size costs nothing to fake), links,
// devices and other special files, absolute names and names with a ".."
// element, batch files declaring more than BatchRecords records, and
// batches.meta.txt or readme.html above 64 KiB. Only the eight CIFAR-10
// files are extracted, each under its own name inside the cache. Memory and
// disk use are therefore never larger than the real dataset's, whatever
// the archive declares.
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
// 1,024 red, 1,024 green and 1,024 blue bytes of the image, each plane in
// row-major order. The official files hold BatchRecords (10,000) records
// each. The loader turns the planes into the interleaved HWC layout above
// and rejects files whose size is not a whole number of records, files of
// more than 10,000 records, batch files that hold different numbers of
// records (small copies made for tests hold fewer, the same in every file),
// and labels above 9.
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
// names, whose classes even a linear model learns within one epoch. It is
// meant for tests, examples and benchmarks that cannot download 170 MB.
package cifar10
