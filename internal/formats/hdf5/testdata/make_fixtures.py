"""Writes the h5py-made fixtures read_test.go checks (python3 make_fixtures.py DIR).

default.h5: h5py's default libver (superblock 0, symbol-table groups with
B-tree v1 and local heaps, layout v3), as Keras 2 and 3 write their files.
latest.h5: libver="latest" (superblock 3, "OHDR" object headers with
checksums, link messages), contiguous data only.
"""
import sys
import h5py
import numpy as np

out = sys.argv[1]
a = np.arange(35, dtype=np.float32).reshape(5, 7) / 4 - 3

with h5py.File(out + "/default.h5", "w") as f:
    f.attrs["keras_version"] = b"2.15.0"           # fixed-length bytes
    f.attrs["backend"] = "tensorflow"              # variable-length str
    f.attrs["model_config"] = '{"class_name": "Sequential", "name": "é"}'
    g = f.create_group("model_weights")
    g.attrs["layer_names"] = [b"dense", b"conv2d_1"]  # array of fixed bytes
    g.attrs["vlen_names"] = ["a", "bc", ""]           # array of vlen str
    g.attrs["epsilon"] = 1e-7
    g.attrs["counts"] = np.array([1, -2, 3], np.int32)
    d = g.create_group("dense").create_group("dense")
    d.create_dataset("kernel:0", data=a)
    d.create_dataset("bias:0", data=np.array([0.5, -1], np.float64))
    c = g.create_group("conv2d_1").create_group("conv2d_1")
    c.create_dataset("gzip", data=a, chunks=(2, 3), compression="gzip")
    c.create_dataset("shuffle", data=a, chunks=(4, 4), compression="gzip", shuffle=True)
    c.create_dataset("chunked", data=a, chunks=(5, 2))
    c.create_dataset("iterations", data=np.int64(42))
    c.create_dataset("scalar", data=np.float32(2.5))
    c.create_dataset("empty", shape=(0, 3), dtype=np.float32)
    t = f.create_group("ordered", track_order=True)  # link messages in a v1 header
    t.create_dataset("z", data=np.float32([1, 2]))
    t.create_group("a").attrs["note"] = np.bytes_(b"space  ")
    deep = f
    for i in range(6):
        deep = deep.create_group("d%d" % i)
    deep.attrs["depth"] = 6

with h5py.File(out + "/latest.h5", "w", libver="latest") as f:
    f.attrs["keras_version"] = "3.3.3"
    f.attrs["names"] = [b"x", b"yy"]
    g = f.create_group("layers").create_group("dense")
    g.create_dataset("vars/0", data=a)
    g.attrs["n"] = np.int64(-5)
    f.create_dataset("v4", data=a, chunks=(2, 2), compression="gzip")  # layout v4: refused when read
