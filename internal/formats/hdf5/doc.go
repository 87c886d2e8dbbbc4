// Package hdf5 reads and writes the subset of HDF5 that Keras model and
// weights files use (Keras 2's .h5, Keras 3's .weights.h5 and the
// model.weights.h5 inside a .keras archive), in pure Go, written from the
// HDF5 File Format Specification version 3.0; no libhdf5, no cgo.
//
// # Writing
//
//	w := hdf5.NewWriter()
//	w.Root().Attr("keras_version", "2.15.0").Attr("model_config", configJSON)
//	g := w.Root().Group("model_weights")
//	g.Attr("layer_names", []string{"dense"})
//	g.Group("dense").Group("dense").Dataset("kernel:0", []int{784, 10}, kernel)
//	_, err := w.WriteTo(out)
//
// The writer writes superblock version 0 (what h5py writes by default, so
// what Keras' own files have; it needs no checksums and every libhdf5 since
// 1.0 reads it), one version 1 object header per group and dataset, groups
// as link messages (what libhdf5 1.8+ writes for groups that track creation
// order: members keep the order they were added in), contiguous
// little-endian float32 (and, with DatasetInt64, int64) datasets of any
// rank, and attributes that are
// fixed-length strings (scalar or 1-D, as h5py stores numpy bytes and
// Keras 2 its keras_version, backend, model_config, layer_names and
// weight_names), scalar variable-length UTF-8 strings (VarString, as
// h5py stores a str and Keras 3 the names of its vars groups; their bytes
// in one global heap collection after the raw data) or float32, float64
// and int64 scalars and 1-D arrays.
// An attribute must fit one object header message (64 KiB): Keras splits
// longer ones (layer_names0, layer_names1, ...) and so must the caller.
// Mistakes (a shape that does not match the data, a name used twice, a
// '/' in a name) are returned by WriteTo, wrapping ErrWrite, before
// anything is written.
//
// # Reading
//
//	f, err := hdf5.Read(r, size) // an io.ReaderAt: *os.File, *bytes.Reader, a zip entry read to memory
//	g, err := f.Root().Group("model_weights/dense")
//	names, err := g.AttrStrings("weight_names")
//	d, err := g.Dataset("dense/kernel:0")
//	values, err := d.Float32() // row-major, of d.Shape()
//
// Read parses the superblock (versions 0 to 3), the whole group tree and
// every attribute; dataset values are read by Float32. It reads what h5py
// writes with its default settings and with libver="latest":
//   - object headers of version 1 and 2 ("OHDR", checksums verified), with
//     continuation chunks;
//   - groups as symbol tables (a version 1 B-tree, symbol table nodes and a
//     local heap) or as link messages; soft and external links are not
//     followed, committed datatypes are skipped;
//   - attributes of fixed-length strings (cut at the first NUL, or with
//     trailing spaces removed when space-padded), variable-length
//     strings (from the global heap), integers (as int64) and floats (as
//     float64), scalar or of any shape (flattened);
//   - datasets of float32, float64 and 8- to 64-bit integers, both byte
//     orders, compact, contiguous or chunked (layout version 3, chunks
//     indexed by a version 1 B-tree) with the deflate (gzip), shuffle and
//     fletcher32 filters (its checksum is not verified). Float32 converts
//     float64 and integers to float32.
//
// Refused with ErrUnsupported: dense link or attribute storage (fractal
// heaps: a group with more than 8 links created with track_order or
// libver="latest"), chunked data in layout version 4 (libver="latest"),
// other filters (lzf, szip, ...), shared or committed datatypes in
// datasets, compound, enum, array and reference types, VAX floats. A
// dataset whose layout is refused does not stop the rest of the file from
// being read: its Float32 returns the error.
//
// Refused with ErrFormat, before any allocation larger than the file: a
// missing signature, a superblock whose end of file is past the real end
// (a truncated file), any address or size that points past the end, a
// checksum mismatch, a cycle of group links, B-tree nodes or header
// continuations, groups nested deeper than 64, more than 65536 objects,
// ranks over 32, and chunked data that would expand beyond what deflate
// can produce from a file of that size. Every error names the object
// (its path) and what is wrong with it.
package hdf5
