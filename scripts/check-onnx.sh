#!/usr/bin/env bash
# Checks onnx.ExportFile (package export/onnx) end to end.
# scripts/onnx/export builds, trains for a few steps and exports twenty-three
# models (the CIFAR-10 MLP, Keras' cifar10_cnn, a model of 2D
# normalizations and "same" paddings, one of 1D layers (a Dense on every
# step among them), Reshape and global poolings, one of GELU activations,
# two of the other activations (one with those TF.js lacks), an Embedding model, and two
# functional models of shared layers: a convolution and a Dense applied
# twice, a 1D convolution three times; one of every merge layer, and one
# of those but Subtract, which TensorFlow.js lacks; one of
# ZeroPadding2D, Cropping2D, UpSampling2D, Identity and ReLU; one of two
# inputs, an image and a vector, and two outputs, one of which, from a
# convolution, the other reads; and one of Dot layers along every pair of
# axes, normalized or not; and one of RandomFlip, RandomTranslation,
# RandomZoom, RandomRotation, RandomBrightness, RandomContrast and
# Rescaling; and one of
# Normalization layers, which TensorFlow.js lacks; and one of RandomCrop,
# Resizing and CenterCrop, whose TF.js export is refused; and five of
# recurrent layers, as ONNX's RNN, LSTM and GRU operators: an Embedding,
# LSTM (return_sequences) and GRU classifier; one of go_backwards
# SimpleRNN, LSTM and GRU layers, other activations and a GRU without
# reset_after; one of Bidirectional layers in each merge mode; one of
# TimeDistributed Conv2D, MaxPooling2D, Flatten and Dense around a GRU;
# and a functional one of return_state, initial states and Bidirectional
# with merge mode None) and writes their inputs and gokeras'
# PredictOutputs outputs; then
#   - ONNX Runtime for Node.js (onnxruntime-node, from the npm registry)
#     runs each model, fed by its graph's input names, and every output,
#     by name, must be within 1e-5 of gokeras', relative to max(1,
#     |value|) (scripts/onnx/check.mjs);
#   - Debian's python3-onnx checks each file: onnx.checker.check_model
#     with full_check (strict shape inference);
#   - TensorFlow.js (@tensorflow/tfjs, its pure-JavaScript CPU backend,
#     from the npm registry) loads each model's TF.js export (export/tfjs)
#     with tf.loadLayersModel and its predictions must be within 1e-5 of
#     gokeras' the same way (scripts/tfjs/check.mjs); a model TF.js cannot
#     hold (a Subtract layer) is skipped, saying why.
# Prints a PASS or FAIL line per model and check; exits 1 if any fails.
#
# What it needs and lacks, it installs: nodejs and npm (apt) when there is
# no node, onnxruntime-node (npm ci --ignore-scripts, into
# scripts/onnx/node_modules, kept between runs: its install script would
# fetch optional GPU binaries, and the CPU runtime ships in the package)
# and python3-onnx (apt). apt runs as root, through sudo when not root.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
start=$SECONDS

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}
apt_updated=
apt_install() {
  if [ -z "$apt_updated" ]; then
    as_root apt-get update -qq
    apt_updated=1
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# Node.js, for ONNX Runtime.
if ! command -v node >/dev/null; then
  echo "check-onnx: no node: installing nodejs and npm with apt"
  apt_install nodejs npm
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 16 ]; then
  echo "check-onnx: node $(node --version) is too old for onnxruntime-node: install Node.js 16 or later" >&2
  exit 1
fi

# onnxruntime-node, the version scripts/onnx/package-lock.json pins.
ort_dir=scripts/onnx
ort_installed() {
  (cd "$ort_dir" && node -e '
    const want = require("./package-lock.json").packages["node_modules/onnxruntime-node"].version;
    const have = require("./node_modules/onnxruntime-node/package.json").version;
    process.exit(want === have ? 0 : 1);' 2>/dev/null)
}
if ! ort_installed; then
  if ! command -v npm >/dev/null; then
    echo "check-onnx: no npm: installing it with apt"
    apt_install npm
  fi
  echo "check-onnx: installing onnxruntime-node into $ort_dir/node_modules (npm ci --ignore-scripts)"
  if ! (cd "$ort_dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error); then
    echo "check-onnx: npm could not install onnxruntime-node: is the npm registry ($(npm config get registry 2>/dev/null)) reachable? Set npm's registry or proxy, then run again" >&2
    exit 1
  fi
fi

# python3-onnx: Debian installs it for Debian's python3, which may not be
# the first python3 on the PATH (pyenv, a virtual environment).
python=python3
if [ -x /usr/bin/python3 ]; then
  python=/usr/bin/python3
fi
if ! "$python" -c 'import onnx' 2>/dev/null; then
  echo "check-onnx: no onnx module for $python: installing python3-onnx with apt"
  apt_install python3-onnx
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "check-onnx: exporting the models (go run ./scripts/onnx/export)"
go run ./scripts/onnx/export -out "$out"

failed=0
node "$ort_dir/check.mjs" "$out" || failed=1

# TensorFlow.js, the version scripts/tfjs/package-lock.json pins.
tfjs_dir=scripts/tfjs
tfjs_installed() {
  (cd "$tfjs_dir" && node -e '
    const want = require("./package-lock.json").packages["node_modules/@tensorflow/tfjs"].version;
    const have = require("./node_modules/@tensorflow/tfjs/package.json").version;
    process.exit(want === have ? 0 : 1);' 2>/dev/null)
}
if ! tfjs_installed; then
  echo "check-onnx: installing @tensorflow/tfjs into $tfjs_dir/node_modules (npm ci --ignore-scripts)"
  if ! (cd "$tfjs_dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error); then
    echo "check-onnx: npm could not install @tensorflow/tfjs: is the npm registry ($(npm config get registry 2>/dev/null)) reachable? Set npm's registry or proxy, then run again" >&2
    exit 1
  fi
fi
echo "TensorFlow.js $(cd "$tfjs_dir" && node -p 'require("./node_modules/@tensorflow/tfjs/package.json").version') (tf.loadLayersModel, CPU backend)"
node "$tfjs_dir/check.mjs" "$out" || failed=1

"$python" - "$out"/*.onnx <<'EOF' || failed=1
import os, sys
import onnx
print(f"onnx {onnx.__version__} (onnx.checker, full_check)")
failed = False
for path in sys.argv[1:]:
    name = os.path.basename(path)[:-len(".onnx")]
    try:
        onnx.checker.check_model(path, full_check=True)
        m = onnx.load(path)
        opset = [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")]
        print(f"PASS onnx.checker {name}: IR version {m.ir_version}, opset {opset[0]}, {len(m.graph.node)} nodes")
    except Exception as e:
        print(f"FAIL onnx.checker {name}: {e}")
        failed = True
sys.exit(1 if failed else 0)
EOF

if [ "$failed" != 0 ]; then
  echo "check-onnx: FAIL ($((SECONDS - start))s)"
  exit 1
fi
echo "check-onnx: PASS ($((SECONDS - start))s)"
