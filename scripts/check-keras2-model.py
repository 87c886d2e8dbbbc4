#!/usr/bin/env python3
"""Check Keras 2 .h5 model files against the layout of one Keras 2 wrote, with h5py.

    python3 scripts/check-keras2-model.py REFERENCE.h5 FILE.h5...

REFERENCE.h5 is a whole-model file tf.keras 2 itself saved with
model.save("m.h5") (nn/testdata/keras/keras2circom_model.h5, Keras 2.10);
each FILE.h5 is one gokeras wrote (nn.Model Save to a .h5 name). Every
file, the reference first (so that the checks are shown to hold for Keras'
own file), must have:

- root attributes backend, keras_version (2.x.y) and model_config, and
  training_config when compiled, the JSON attributes decoding to objects;
- a model_config of class Sequential (config: name, layers) or Functional
  (config: name, layers, input_layers, output_layers), each layer a
  {"class_name", "config"} whose config has a name (and trainable and
  dtype, but for an InputLayer, which has batch_input_shape), a functional
  model's layers with name and Keras 2's nested-list inbound_nodes
  ([[["input_1", 0, 0, {}]]]), listed in the order Keras makes from the
  graph (deepest first, as check-keras-archive.py computes it);
- a training_config with the reference's keys, its optimizer_config a
  {"class_name", "config"};
- a model_weights group whose layer_names lists the model's layers in
  Keras' order (a Sequential's without its InputLayer), each with a group
  whose weight_names name float32 datasets inside it, Dense kernels of
  (inputs, units) and biases of (units,), convolution kernels of
  kernel_size + (channels, filters).

Beyond the reference itself, each file must use the reference's keys for
the same things: the root attributes, training_config, and each layer's
entry and config for the classes the reference has (constraints and
initializers aside: gokeras writes no initializers).

It prints one line per file and exits 0 when every file passes, 1 when one
does not (each problem printed), 2 on a bad command line.
"""

import importlib.util
import json
import os
import re
import sys

import h5py

spec = importlib.util.spec_from_file_location(
    "check_keras_archive", os.path.join(os.path.dirname(os.path.abspath(__file__)), "check-keras-archive.py"))
archive = importlib.util.module_from_spec(spec)
spec.loader.exec_module(archive)


def text(v):
    return v.decode("utf8") if isinstance(v, bytes) else str(v)


def strings(v):
    return [text(x) for x in v]


def keras3_nodes(entry):
    """A layer's Keras 2 inbound nodes as check-keras-archive.py reads
    Keras 3's: each call's argument a tensor, or a list of them."""
    nodes = []
    for call in entry["inbound_nodes"]:
        ts = [{"config": {"keras_history": t[:3]}} for t in call]
        nodes.append({"args": [ts if len(ts) > 1 else ts[0]]})
    return nodes


def check(path):
    problems = []
    f = h5py.File(path, "r")
    for k in ("backend", "keras_version", "model_config"):
        if k not in f.attrs:
            problems.append("no root attribute %s" % k)
    if not re.fullmatch(r"2\.\d+\.\d+", text(f.attrs.get("keras_version", ""))):
        problems.append("keras_version %r is not a Keras 2 version" % f.attrs.get("keras_version"))
    config = json.loads(text(f.attrs["model_config"]))
    training = json.loads(text(f.attrs["training_config"])) if "training_config" in f.attrs else None
    cls = config.get("class_name")
    model = config.get("config", {})
    want = {"Sequential": {"name", "layers"}, "Functional": {"name", "layers", "input_layers", "output_layers"}}.get(cls)
    if want is None:
        problems.append("model_config's class_name is %r" % cls)
    elif not want <= set(model):
        problems.append("the model's config has keys %s, want %s" % (sorted(model), sorted(want)))
    layers = model.get("layers", [])
    for i, entry in enumerate(layers):
        what = "layer %d (%s)" % (i, entry.get("class_name"))
        lc = entry.get("config", {})
        need = {"name", "batch_input_shape", "dtype"} if entry.get("class_name") == "InputLayer" else {"name", "trainable", "dtype"}
        if not need <= set(lc):
            problems.append("%s's config lacks %s" % (what, sorted(need - set(lc))))
        if cls == "Functional":
            nodes = entry.get("inbound_nodes")
            ok = isinstance(nodes, list) and all(
                isinstance(call, list) and all(isinstance(t, list) and len(t) == 4 and isinstance(t[3], dict) for t in call)
                for call in nodes)
            if not ok or "name" not in entry:
                problems.append("%s has no name or no Keras 2 inbound_nodes: %r" % (what, nodes))
    order = [e["config"]["name"] for e in layers]
    if cls == "Functional":
        converted = dict(model, layers=[dict(e, inbound_nodes=keras3_nodes(e)) for e in layers])
        order = archive.functional_order(converted)
        if order != [e["name"] for e in layers]:
            problems.append("model_config lists the layers %s, but Keras orders them %s" % ([e["name"] for e in layers], order))
    elif layers and layers[0]["class_name"] == "InputLayer":
        order = order[1:]
    if training is not None:
        oc = training.get("optimizer_config")
        if not isinstance(oc, dict) or set(oc) != {"class_name", "config"}:
            problems.append("training_config's optimizer_config %r is not a serialized optimizer" % (oc,))
    g = f["model_weights"]
    names = strings(g.attrs.get("layer_names", []))
    if names != order:
        problems.append("layer_names %s, want the layers in Keras' order %s" % (names, order))
    by_name = {e["config"]["name"] if cls != "Functional" else e["name"]: e for e in layers}
    for name in names:
        if name not in g:
            problems.append("layer_names lists %s but model_weights has no group for it" % name)
            continue
        wn = g[name].attrs.get("weight_names")
        wn = [] if wn is None or len(wn) == 0 else strings(wn)
        datasets = []
        for w in wn:
            if w not in g[name]:
                problems.append("layer %s lists weight %s but has no dataset for it" % (name, w))
                continue
            d = g[name][w]
            if d.dtype != "float32":
                problems.append("weight %s/%s is %s" % (name, w, d.dtype))
            datasets.append(d.shape)
        entry = by_name.get(name, {})
        lc = entry.get("config", {})
        if entry.get("class_name") == "Dense" and datasets:
            if datasets[0][1:] != (lc["units"],) or (len(datasets) > 1 and datasets[1] != (lc["units"],)):
                problems.append("Dense %s has weights of shapes %s for %d units" % (name, datasets, lc["units"]))
        if entry.get("class_name") in ("Conv1D", "Conv2D") and datasets:
            k = datasets[0]
            if list(k[:-2]) != list(lc["kernel_size"]) or k[-1] != lc["filters"]:
                problems.append("%s %s has a kernel of shape %s for kernel_size %s and %d filters" % (entry["class_name"], name, k, lc["kernel_size"], lc["filters"]))
    f.close()
    return problems, config, training, path


def compare(got, ref):
    problems = []
    config, training, path = got[1], got[2], got[3]
    rconfig, rtraining, rpath = ref[1], ref[2], ref[3]
    with h5py.File(path, "r") as f, h5py.File(rpath, "r") as r:
        if set(f.attrs) - {"training_config"} != set(r.attrs) - {"training_config"}:
            problems.append("root attributes %s, the reference's %s" % (sorted(f.attrs), sorted(r.attrs)))
        if set(f["model_weights"].attrs) != set(r["model_weights"].attrs):
            problems.append("model_weights attributes %s, the reference's %s" % (sorted(f["model_weights"].attrs), sorted(r["model_weights"].attrs)))
    if training is not None and set(training) != set(rtraining):
        problems.append("training_config's keys %s, the reference's %s" % (sorted(training), sorted(rtraining)))
    # Keras 2 may put a Sequential's input shape on its first layer.
    skip = lambda keys: {k for k in keys if not k.endswith("_initializer") and not k.endswith("_constraint") and k != "batch_input_shape"}
    by_class = {}
    for e in rconfig["config"]["layers"]:
        by_class.setdefault(e["class_name"], e)
    for e in config["config"]["layers"]:
        r = by_class.get(e["class_name"])
        if r is None:
            continue
        extra = {"name", "inbound_nodes"}
        if set(e) - extra != set(r) - extra:
            problems.append("%s's entry has keys %s, the reference's %s" % (e["class_name"], sorted(e), sorted(r)))
        if skip(e["config"]) != skip(r["config"]):
            problems.append("%s's config has keys %s, the reference's %s" % (e["class_name"], sorted(skip(e["config"])), sorted(skip(r["config"]))))
    return problems


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    ok, ref = True, None
    for i, path in enumerate(argv[1:]):
        got = check(path)
        problems = got[0]
        if i == 0:
            ref = got
        else:
            problems = problems + compare(got, ref)
        ok = ok and not problems
        print("%s: %s" % (path, "ok" if not problems else "%d problems" % len(problems)))
        for p in problems:
            print("  " + p)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
