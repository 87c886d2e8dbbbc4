// Runs each model of DIR/manifest.json (written by scripts/onnx/export)
// in ONNX Runtime for Node.js on its inputs, fed by their graph names, and
// compares each of its outputs with gokeras' PredictOutputs output of that
// name: the runtime must return the manifest's outputs, no more, and every
// value must be within 1e-5 of gokeras', relative to max(1, |gokeras'
// value|), so absolute below 1 and relative above. Prints a PASS or FAIL
// line per model; exits 1 if any fails.
//
//   node scripts/onnx/check.mjs DIR
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ort from 'onnxruntime-node';

const tolerance = 1e-5;

function floats(path) {
  const b = readFileSync(path);
  return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
}

// compare compares the runtime's output got with gokeras' values of the
// manifest's output o; it returns a summary, or a string saying what
// differs inside { fail }.
function compare(dir, o, got) {
  const want = floats(join(dir, o.file));
  if (got.type !== 'float32' || got.dims.join(',') !== o.shape.join(',')) {
    return { fail: `${o.name}: ${got.type} of shape [${got.dims}], want float32 of shape [${o.shape}]` };
  }
  let worst = 0, at = 0, maxAbs = 0;
  for (let i = 0; i < want.length; i++) {
    const d = Math.abs(got.data[i] - want[i]);
    const scaled = d / Math.max(1, Math.abs(want[i]));
    if (!(scaled <= worst)) { worst = scaled; at = i; } // NaN counts as worst
    maxAbs = Math.max(maxAbs, d);
  }
  const summary = `${want.length} values, max |diff| ${maxAbs.toExponential(2)}, max |diff|/max(1,|y|) ${worst.toExponential(2)}`;
  if (!(worst <= tolerance)) {
    return { fail: `${o.name}: ${summary} > ${tolerance} at index ${at}: ONNX Runtime ${got.data[at]}, gokeras ${want[at]}` };
  }
  return { ok: summary };
}

async function check(dir, m) {
  const session = await ort.InferenceSession.create(join(dir, m.onnx));
  const feeds = {};
  for (const x of m.inputs) {
    feeds[x.name] = new ort.Tensor('float32', floats(join(dir, x.file)), x.shape);
  }
  // The graph's inputs and outputs, in order, are the manifest's.
  const inNames = m.inputs.map((x) => x.name), outNames = m.outputs.map((o) => o.name);
  if (session.inputNames.join(',') !== inNames.join(',') || session.outputNames.join(',') !== outNames.join(',')) {
    return `the graph takes [${session.inputNames}] and returns [${session.outputNames}], want [${inNames}] and [${outNames}]`;
  }
  const results = await session.run(feeds);
  const summaries = [];
  for (const o of m.outputs) {
    const r = compare(dir, o, results[o.name]);
    if (r.fail) {
      return r.fail;
    }
    summaries.push(m.outputs.length > 1 ? `${o.name}: ${r.ok}` : r.ok);
  }
  return { ok: summaries.join('; ') };
}

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node scripts/onnx/check.mjs DIR');
  process.exit(2);
}
const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
console.log(`onnxruntime-node ${ort.env.versions?.common ?? ''}`.trim());
let failed = 0;
for (const m of manifest) {
  let result;
  try {
    result = await check(dir, m);
  } catch (e) {
    result = String(e?.message ?? e);
  }
  if (result.ok) {
    console.log(`PASS onnxruntime ${m.name}: ${result.ok}`);
  } else {
    console.log(`FAIL onnxruntime ${m.name}: ${result}`);
    failed++;
  }
}
process.exit(failed ? 1 : 0);
