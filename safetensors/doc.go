// Package safetensors reads and writes float32 tensors in the safetensors
// format of Hugging Face, so that weights saved by gokeras open in Python
// (safetensors.numpy.load_file, safetensors.torch.load_file) and in any
// other tool that reads the format.
//
// A safetensors file is
//
//	8 bytes      N, the length of the header, unsigned little-endian
//	N bytes      a JSON object: for each tensor, its name mapped to
//	             {"dtype":"F32","shape":[...],"data_offsets":[begin,end]},
//	             plus an optional "__metadata__" object of string values;
//	             padded with spaces to a multiple of 8 bytes
//	the rest     the tensors' raw little-endian data, back to back, at the
//	             offsets the header gives (relative to the end of the header)
//
// This package writes and reads dtype "F32" only, the type of every gokeras
// weight; a file with other dtypes is reported as such. Reading checks what
// the reference implementation checks — the header is a JSON object, every
// tensor's byte range matches its shape, the ranges tile the data with no
// gap or overlap, and the file is neither truncated nor followed by extra
// bytes — so a damaged file is an error that says what is wrong, never a
// tensor of garbage.
//
// ReadFile and ReadMetadata check before they read: a path that is not a
// regular file (a directory, a device such as /dev/zero, a pipe) is refused
// with ErrNotRegular; the header's length must be at most 100 MB and fit the
// file, and every tensor's byte range must fit the file's size, before any
// tensor data is allocated or read; then only the bytes the header declares
// are read. Whatever a file declares, reading it costs memory in proportion
// to its header and to the data it really holds.
//
// WriteFile replaces its file atomically: a crash or a full disk leaves the
// previous file as it was.
package safetensors
