// Loads each TF.js export of the manifest scripts/onnx/export wrote with
// TensorFlow.js (tf.loadLayersModel, its CPU backend), feeds it the saved
// inputs, and compares every output with gokeras' PredictOutputs: within
// 1e-5 relative to max(1, |value|). Prints PASS or FAIL per model; exits
// 1 if any fails.
//
//   node scripts/tfjs/check.mjs DIR
import fs from "node:fs";
import path from "node:path";

// TensorFlow.js greets Node.js users on stderr with advice on tfjs-node,
// its native backend: this check runs the pure-JavaScript one on purpose.
const quiet = { log: console.log, warn: console.warn, info: console.info, error: console.error };
for (const k of Object.keys(quiet)) console[k] = () => {};
const tf = await import("@tensorflow/tfjs");
await tf.setBackend("cpu");
await tf.ready();
tf.tensor([0]).dispose(); // the CPU backend greets at its first tensor
Object.assign(console, quiet);

const dir = process.argv[2];
if (!dir) {
  console.error("usage: node check.mjs DIR (the folder scripts/onnx/export wrote)");
  process.exit(2);
}

function floats(file) {
  const b = fs.readFileSync(path.join(dir, file));
  return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
}

// fileHandler loads model.json and its shards from a folder.
function fileHandler(folder) {
  return {
    async load() {
      const json = JSON.parse(fs.readFileSync(path.join(folder, "model.json"), "utf8"));
      const specs = [];
      const parts = [];
      for (const group of json.weightsManifest) {
        specs.push(...group.weights);
        for (const p of group.paths) parts.push(fs.readFileSync(path.join(folder, p)));
      }
      const all = Buffer.concat(parts);
      const weightData = all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength);
      return { modelTopology: json.modelTopology, format: json.format, generatedBy: json.generatedBy,
        convertedBy: json.convertedBy, weightSpecs: specs, weightData };
    },
  };
}

const manifest = JSON.parse(fs.readFileSync(path.join(dir, "manifest.json"), "utf8"));
let failed = 0;
for (const e of manifest) {
  if (!e.tfjs) {
    console.log(`SKIP ${e.name}: ${e.tfjs_refused}`);
    continue;
  }
  try {
    const model = await tf.loadLayersModel(fileHandler(path.join(dir, e.tfjs)));
    const xs = e.inputs.map((t) => tf.tensor(floats(t.file), t.shape, "float32"));
    let ys = model.predict(xs.length === 1 ? xs[0] : xs);
    if (!Array.isArray(ys)) ys = [ys];
    if (ys.length !== e.outputs.length) throw new Error(`${ys.length} outputs, want ${e.outputs.length}`);
    let worst = 0;
    for (let k = 0; k < ys.length; k++) {
      const want = floats(e.outputs[k].file);
      const got = ys[k].dataSync();
      if (got.length !== want.length) throw new Error(`output ${e.outputs[k].name}: ${got.length} values, want ${want.length}`);
      for (let i = 0; i < want.length; i++) {
        const d = Math.abs(got[i] - want[i]) / Math.max(1, Math.abs(want[i]));
        if (!(d <= 1e-5)) throw new Error(`output ${e.outputs[k].name}[${i}]: ${got[i]}, gokeras ${want[i]}`);
        worst = Math.max(worst, d);
      }
    }
    console.log(`PASS ${e.name}: ${ys.length} output(s), max relative difference ${worst.toExponential(2)}`);
  } catch (err) {
    failed++;
    console.log(`FAIL ${e.name}: ${err.message}`);
  }
}
process.exit(failed ? 1 : 0);
