#!/usr/bin/env python3
"""Check .keras archives against the layout of one Keras 3 wrote, with h5py.

    python3 scripts/check-keras-archive.py REFERENCE.keras FILE.keras...

REFERENCE.keras is an archive Keras 3 itself saved (nn/testdata/keras/
flownet_final_model.keras); each FILE.keras is one gokeras wrote (nn.Model
Save to a .keras name, train --save-model m.keras). Every archive, the
reference first (so that the checks below are shown to hold for Keras'
own file), must have:

- the zip members metadata.json, config.json and model.weights.h5, in that
  order, stored uncompressed;
- metadata.json with keras_version and date_saved (YYYY-MM-DD@HH:MM:SS);
- config.json with module, class_name (Sequential or Functional), config,
  registered_name and build_config; each layer with module "keras.layers",
  class_name, config (name, trainable, dtype) and registered_name, a
  functional model's layers with name and inbound_nodes too; serialized
  initializers with module "keras.initializers"; compile_config, when
  there is one, with the reference's keys, its optimizer serialized with
  the optimizer config keys the reference's has;
- model.weights.h5, read with h5py, with no root attributes, a "vars" group
  named after the model (its "name" attribute) and a "layers" group holding
  exactly one group per layer of config.json, named as Keras 3 names them
  (the snake-case class name, numbered per class in layer order: dense,
  dense_1, ...; a Sequential's InputLayer left out; a functional model's
  layers in the order Keras 3 makes from the graph, which its config.json
  lists them in too), each with a "vars"
  group named after the layer (a variable-length UTF-8 string, as h5py
  writes a str) and, for a recurrent layer, a "cell/vars" group; the variables are float32 datasets 0, 1, ... whose shapes are
  those the layer's config and build_config give (Dense, Conv1D/2D,
  BatchNormalization, LayerNormalization, Embedding, SimpleRNN, LSTM, GRU);
  an "optimizer" group, when there is one, holds a named "vars" group of
  datasets 0, 1, ..., the first the step count, an int64 scalar; for the
  optimizers of compile_config that Keras 3 keeps slots for (SGD, Adam,
  AdamW, RMSprop, Adagrad, Adadelta, Adamax, Nadam), the variables are
  those Keras 3 makes, in its order (that of the keras_version the file
  names), of the shapes of the model's trainable variables
  (optimizer_shapes).

Beyond the reference itself, each file's config.json must use the same keys
as the reference's for the same things: the top level, the model's config,
and each layer's entry and config for the classes the reference has.

It prints one line per archive and exits 0 when every archive passes, 1
when one does not (each problem printed), 2 on a bad command line.
"""

import io
import json
import re
import sys
import zipfile

import h5py

MEMBERS = ["metadata.json", "config.json", "model.weights.h5"]
# MultiHeadAttention's sublayers in the order Keras 3 makes (and trains) them.
SUBLAYER_ORDER = {"_query_dense": 0, "_key_dense": 1, "_value_dense": 2, "_output_dense": 3}
ENTRY_KEYS = {"module", "class_name", "config", "registered_name"}
OPTIMIZER_KEYS = {
    "name", "learning_rate", "weight_decay", "clipnorm", "global_clipnorm", "clipvalue",
    "use_ema", "ema_momentum", "ema_overwrite_frequency", "loss_scale_factor",
    "gradient_accumulation_steps",
}


def snake(name):
    """Keras 3's to_snake_case, for class names."""
    name = re.sub(r"\W+", "", name)
    name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub("([a-z])([A-Z])", r"\1_\2", name).lower()


def batch_dims(shape):
    """A build_config input_shape ([null, 4] or a list of them): the first."""
    if shape and isinstance(shape[0], list):
        shape = shape[0]
    return shape


def expected_shapes(class_name, config, build):
    """The shapes of a layer's variables, as Keras 3 makes them, or None
    when this script does not know the class."""
    shape = batch_dims((build or {}).get("input_shape"))
    if class_name == "Dense":
        shapes = [(shape[-1], config["units"])]
        if config.get("use_bias", True):
            shapes.append((config["units"],))
        return shapes
    if class_name in ("Conv1D", "Conv2D"):
        kernel = tuple(config["kernel_size"]) + (shape[-1], config["filters"])
        return [kernel] + ([(config["filters"],)] if config.get("use_bias", True) else [])
    if class_name in ("BatchNormalization", "LayerNormalization"):
        c = shape[-1]
        shapes = []
        if config.get("scale", True):
            shapes.append((c,))
        if config.get("center", True):
            shapes.append((c,))
        if class_name == "BatchNormalization":
            shapes += [(c,), (c,)]
        return shapes
    if class_name == "Normalization":
        if config.get("mean") is not None:
            return []  # given its statistics: no variables
        axis = config.get("axis", [-1])
        axis = [axis] if isinstance(axis, int) else axis
        stat = tuple(shape[a] for a in axis)
        return [stat, stat, ()]  # mean, variance, the count a scalar
    if class_name == "Embedding":
        return [(config["input_dim"], config["output_dim"])]
    if class_name == "TimeDistributed":
        inner = config["layer"]
        return expected_shapes(inner["class_name"], inner["config"], {"input_shape": [None] + list(shape[2:])})
    if class_name == "Bidirectional":
        inner = config["layer"]
        half = expected_shapes(inner["class_name"], inner["config"], build)
        return None if half is None else half + half
    gates = {"SimpleRNN": 1, "LSTM": 4, "GRU": 3}.get(class_name)
    if gates:
        u = config["units"]
        shapes = [(shape[-1], gates * u), (u, gates * u)]
        if config.get("use_bias", True):
            if class_name == "GRU" and config.get("reset_after", True):
                shapes.append((2, gates * u))
            else:
                shapes.append((gates * u,))
        return shapes
    return None


def named(group, want):
    """Whether group's "name" attribute is want, a variable-length UTF-8
    string as h5py writes a str (what Keras 3 writes)."""
    if group.attrs.get("name") != want:
        return False
    info = h5py.check_string_dtype(group.attrs.get_id("name").dtype)
    return info is not None and info.length is None


def history(arg):
    """The [layer, node, tensor] of each tensor of a call's argument."""
    if isinstance(arg, list):
        return [t["config"]["keras_history"] for t in arg]
    return [arg["config"]["keras_history"]]


def functional_order(model):
    """The order of a functional model's layers in Keras 3's
    Functional.layers, made from the graph as Keras' map_graph makes it
    (whatever the order of the config's layers): depth first from the
    outputs, each call's inputs in order, numbering layers when first met;
    then deepest first (a call's depth is its longest path to an output, a
    layer's its deepest call's), ties in the order met."""
    entries = {e["name"]: e for e in model["layers"]}

    def parents(name, node):
        entry = entries[name]
        if entry["class_name"] == "InputLayer":
            return []
        return [(h[0], h[1]) for h in history(entry["inbound_nodes"][node]["args"][0])]

    met, finished, post = {}, set(), []

    def walk(key):
        if key in finished:
            return
        met.setdefault(key[0], len(met))
        for p in parents(*key):
            walk(p)
        finished.add(key)
        post.append(key)

    outputs = model["output_layers"]
    if outputs and isinstance(outputs[0], str):
        outputs = [outputs]
    for out in outputs:
        walk((out[0], out[1]))
    node_depth, layer_depth = {}, {}
    for key in reversed(post):
        d = max(node_depth.get(key, 0), layer_depth.get(key[0], 0))
        layer_depth[key[0]] = node_depth[key] = d
        for p in parents(*key):
            node_depth[p] = max(node_depth.get(p, 0), d + 1)
    return sorted(layer_depth, key=lambda name: (-layer_depth[name], met[name]))


def check(path):
    """The problems of the archive at path, and its config.json."""
    problems = []
    with zipfile.ZipFile(path) as z:
        infos = z.infolist()
        names = [i.filename for i in infos]
        if names != MEMBERS:
            problems.append("members %s, want %s" % (names, MEMBERS))
        for i in infos:
            if i.compress_type != zipfile.ZIP_STORED:
                problems.append("member %s is compressed" % i.filename)
        meta = json.loads(z.read("metadata.json"))
        config = json.loads(z.read("config.json"))
        weights = z.read("model.weights.h5")
    if set(meta) != {"keras_version", "date_saved"}:
        problems.append("metadata.json has keys %s" % sorted(meta))
    if not re.fullmatch(r"3\.\d+\.\d+", str(meta.get("keras_version"))):
        problems.append("keras_version %r is not a Keras 3 version" % meta.get("keras_version"))
    if not re.fullmatch(r"\d{4}-\d\d-\d\d@\d\d:\d\d:\d\d", str(meta.get("date_saved"))):
        problems.append("date_saved %r is not YYYY-MM-DD@HH:MM:SS" % meta.get("date_saved"))

    for k in ENTRY_KEYS | {"build_config"}:
        if k not in config:
            problems.append("config.json has no %s" % k)
    cls = config.get("class_name")
    if cls not in ("Sequential", "Functional"):
        problems.append("config.json's class_name is %r" % cls)
    model = config.get("config", {})
    layers = model.get("layers", [])
    for i, entry in enumerate(layers):
        what = "layer %d (%s)" % (i, entry.get("class_name"))
        if not ENTRY_KEYS <= set(entry):
            problems.append("%s has keys %s, want %s" % (what, sorted(entry), sorted(ENTRY_KEYS)))
        if entry.get("module") != "keras.layers":
            problems.append("%s has module %r" % (what, entry.get("module")))
        if entry.get("registered_name") is not None:
            problems.append("%s has registered_name %r, want null for a built-in layer" % (what, entry.get("registered_name")))
        lc = entry.get("config", {})
        for k in ("name",) + (() if entry.get("class_name") == "InputLayer" else ("trainable", "dtype")):
            if k not in lc:
                problems.append("%s's config has no %s" % (what, k))
        for k, v in lc.items():
            if k.endswith("_initializer") and isinstance(v, dict) and v.get("module") != "keras.initializers":
                problems.append("%s's %s has module %r" % (what, k, v.get("module")))
        if cls == "Functional" and not {"name", "inbound_nodes"} <= set(entry):
            problems.append("%s of a functional model has no name or inbound_nodes" % what)
    cc = config.get("compile_config")
    if cc:
        opt = cc.get("optimizer")
        if not isinstance(opt, dict) or not ENTRY_KEYS <= set(opt):
            problems.append("compile_config's optimizer %r is not a serialized optimizer" % (opt,))
        elif not OPTIMIZER_KEYS <= set(opt["config"]):
            problems.append("the optimizer's config lacks %s" % sorted(OPTIMIZER_KEYS - set(opt["config"])))

    f = h5py.File(io.BytesIO(weights), "r")
    if dict(f.attrs):
        problems.append("model.weights.h5 has root attributes %s" % sorted(f.attrs))
    if "vars" not in f or not named(f["vars"], model.get("name")):
        problems.append("model.weights.h5's vars group is missing or not named %r" % model.get("name"))
    if cls == "Functional":
        order = functional_order(model)
        if order != [e["name"] for e in layers]:
            problems.append("config.json lists the layers %s, but Keras orders them %s" % ([e["name"] for e in layers], order))
        by_name = {e["name"]: e for e in layers}
        layers = [by_name[n] for n in order]
    if "optimizer" in f:
        v = f["optimizer"].get("vars")
        if v is None or "name" not in v.attrs or not named(v, v.attrs["name"]):
            problems.append("optimizer has no vars group with a name")
        else:
            keys = sorted(v, key=int)
            if keys != [str(i) for i in range(len(keys))]:
                problems.append("optimizer/vars are %s, not 0 to %d" % (keys, len(keys) - 1))
            elif v["0"].dtype != "int64" or v["0"].shape != ():
                problems.append("optimizer/vars/0, the step count, is %s of shape %s, not an int64 scalar" % (v["0"].dtype, v["0"].shape))
    want, used = {}, {}
    for entry in layers:
        if cls == "Sequential" and entry.get("class_name") == "InputLayer":
            continue
        base = snake(entry["class_name"])
        n = used.get(base)
        used[base] = 0 if n is None else n + 1
        want[base if n is None else "%s_%d" % (base, n + 1)] = entry
    have = set(f["layers"]) if "layers" in f else set()
    trainable = []  # the shapes of model.trainable_variables, in order
    if have != set(want):
        problems.append("layers groups %s, want %s" % (sorted(have), sorted(want)))
    for group, entry in want.items():
        if group not in have:
            continue
        lc = entry["config"]
        g = f["layers"][group]
        if "vars" not in g or not named(g["vars"], lc["name"]):
            problems.append("layers/%s has no vars group named %r" % (group, lc["name"]))
            continue
        at = g["vars"]
        if entry["class_name"] in ("SimpleRNN", "LSTM", "GRU"):
            if "cell" not in g or "vars" not in g["cell"] or "name" not in g["cell"]["vars"].attrs:
                problems.append("layers/%s has no cell/vars group" % group)
                continue
            at = g["cell"]["vars"]
        if entry["class_name"] == "TimeDistributed":
            if "layer" not in g or "vars" not in g["layer"]:
                problems.append("layers/%s has no layer/vars group" % group)
                continue
            at = g["layer"]["vars"]
        if entry["class_name"] == "Bidirectional":
            # The forward layer's cell's variables, then the backward one's.
            halves = [g[h]["cell"]["vars"] for h in ("forward_layer", "backward_layer")
                      if h in g and "cell" in g[h] and "vars" in g[h]["cell"]]
            if len(halves) != 2:
                problems.append("layers/%s has no forward_layer/cell/vars and backward_layer/cell/vars" % group)
                continue
            vs = [h[k] for h in halves for k in sorted(h, key=int)]
            at = {str(i): v for i, v in enumerate(vs)}
        keys = sorted(at, key=int)
        if keys != [str(i) for i in range(len(keys))]:
            problems.append("layers/%s's variables are %s, not 0 to %d" % (group, keys, len(keys) - 1))
        for k in keys:
            if at[k].dtype != "float32":
                problems.append("layers/%s variable %s is %s" % (group, k, at[k].dtype))
        shapes = expected_shapes(entry["class_name"], lc, entry.get("build_config"))
        if shapes is not None:
            got = [tuple(at[k].shape) for k in keys]
            if got != [tuple(s) for s in shapes]:
                problems.append("layers/%s (%s) has variables of shapes %s, want %s" % (group, entry["class_name"], got, shapes))
        if lc.get("trainable", True):
            vs = [tuple(at[k].shape) for k in keys]
            if entry["class_name"] == "BatchNormalization":
                vs = vs[:-2]  # the moving mean and variance are not trainable
            elif entry["class_name"] == "Normalization":
                vs = []  # mean, variance and count: none trainable
            trainable += vs
            # Sublayers' variables (MultiHeadAttention's _query_dense/vars,
            # ...), in the order the layer tracks them.
            for sub in sorted((k for k in g if k.startswith("_") and "vars" in g[k]), key=SUBLAYER_ORDER.get):
                sv = g[sub]["vars"]
                trainable += [tuple(sv[k].shape) for k in sorted(sv, key=int)]
    if cc and "optimizer" in f and "vars" in f["optimizer"] and isinstance(cc.get("optimizer"), dict):
        want_shapes = optimizer_shapes(cc["optimizer"], trainable, meta.get("keras_version"))
        v = f["optimizer"]["vars"]
        got = [tuple(v[k].shape) for k in sorted(v, key=int)]
        if want_shapes is not None and got != want_shapes:
            problems.append("optimizer/vars of %s have shapes %s, Keras 3 makes %s" % (cc["optimizer"]["class_name"], got, want_shapes))
    f.close()
    return problems, config


def optimizer_shapes(opt, trainable, version):
    """The shapes of the variables Keras 3's optimizer opt (compile_config's
    serialized optimizer) makes for a model whose trainable variables have
    the shapes trainable, in order: the step count, the learning rate (not
    for a schedule), then the slots in groups, each group's slots
    interleaved per variable (keras/src/optimizers: add_optimizer_variables
    with a list of names, called once per group), and Nadam's u_product,
    made before its slots up to Keras 3.9 and after them from 3.10 (version
    is metadata.json's keras_version); None for another optimizer."""
    cls, c = opt.get("class_name"), opt.get("config", {})
    if cls == "SGD":
        groups = [["momentum"]] if c.get("momentum", 0) > 0 else []
    elif cls in ("Adam", "AdamW"):
        groups = [["momentum", "velocity"]] + ([["velocity_hat"]] if c.get("amsgrad") else [])
    elif cls == "RMSprop":
        groups = [["velocity"]] + ([["momentum"]] if c.get("momentum", 0) > 0 else []) + ([["average_gradient"]] if c.get("centered") else [])
    elif cls == "Adagrad":
        groups = [["accumulator"]]
    elif cls == "Adadelta":
        groups = [["accumulated_grad", "accumulated_delta_var"]]
    elif cls == "Adamax":
        groups = [["momentum", "norm"]]
    elif cls == "Nadam":
        groups = [["momentum", "velocity"]]
    else:
        return None
    shapes = [()]
    if not isinstance(c.get("learning_rate"), dict):
        shapes.append(())
    u_product_first = tuple(int(p) for p in str(version).split(".")[:2]) < (3, 10)
    if cls == "Nadam" and u_product_first:
        shapes.append(())
    for g in groups:
        for s in trainable:
            shapes += [s] * len(g)
    if cls == "Nadam" and not u_product_first:
        shapes.append(())
    return shapes


def compare(config, ref):
    """The keys config.json uses where the reference uses others."""
    problems = []

    def keys(v):
        return set(v) - {"shared_object_id"} if isinstance(v, dict) else set()

    if keys(config) - {"compile_config"} != keys(ref) - {"compile_config"}:
        problems.append("config.json's keys %s, the reference's %s" % (sorted(keys(config)), sorted(keys(ref))))
    if "compile_config" in config and keys(config["compile_config"]) != keys(ref["compile_config"]):
        problems.append("compile_config's keys %s, the reference's %s" % (sorted(keys(config["compile_config"])), sorted(keys(ref["compile_config"]))))
    if config["class_name"] == ref["class_name"] and keys(config["config"]) != keys(ref["config"]):
        problems.append("the model's config has keys %s, the reference's %s" % (sorted(keys(config["config"])), sorted(keys(ref["config"]))))
    by_class = {}
    for entry in ref["config"]["layers"]:
        by_class.setdefault(entry["class_name"], entry)
    for entry in config["config"]["layers"]:
        r = by_class.get(entry["class_name"])
        if r is None:
            continue
        extra = {"name", "inbound_nodes"} if config["class_name"] == "Functional" else set()
        if keys(entry) - extra != keys(r):
            problems.append("%s's entry has keys %s, the reference's %s" % (entry["class_name"], sorted(keys(entry)), sorted(keys(r))))
        if keys(entry["config"]) != keys(r["config"]):
            problems.append("%s's config has keys %s, the reference's %s" % (entry["class_name"], sorted(keys(entry["config"])), sorted(keys(r["config"]))))
    return problems


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    ok = True
    ref = None
    for i, path in enumerate(argv[1:]):
        problems, config = check(path)
        if i == 0:
            ref = config
        else:
            problems += compare(config, ref)
        ok = ok and not problems
        print("%s: %s" % (path, "ok" if not problems else "%d problems" % len(problems)))
        for p in problems:
            print("  " + p)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
