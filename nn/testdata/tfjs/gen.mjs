// Writes a small TensorFlow.js layers model (model.json + weights.bin) as
// tf.LayersModel.save writes it, and the predictions TF.js computes for
// fixed inputs (predictions.json), for gokeras' TF.js import test.
import fs from "node:fs";
import path from "node:path";
const quiet = { log: console.log, warn: console.warn, info: console.info, error: console.error };
for (const k of Object.keys(quiet)) console[k] = () => {};
const tf = await import("@tensorflow/tfjs");
await tf.setBackend("cpu");
await tf.ready();
tf.tensor([0]).dispose();
Object.assign(console, quiet);
const out = process.argv[2];
fs.mkdirSync(out, { recursive: true });

const model = tf.sequential();
model.add(tf.layers.conv2d({ inputShape: [6, 6, 2], filters: 3, kernelSize: 3, activation: "relu", name: "conv" }));
model.add(tf.layers.batchNormalization({ name: "bn" }));
model.add(tf.layers.maxPooling2d({ poolSize: 2, name: "pool" }));
model.add(tf.layers.flatten({ name: "flat" }));
model.add(tf.layers.dense({ units: 4, activation: "tanh", name: "hidden" }));
model.add(tf.layers.dense({ units: 3, activation: "softmax", name: "probs" }));
// Weights of no pattern; the moving variance positive, away from 1.
model.setWeights(model.weights.map((w, i) => {
  const n = w.shape.reduce((a, b) => a * b, 1);
  const v = new Float32Array(n);
  for (let j = 0; j < n; j++) v[j] = Math.sin(0.37 * (j + 1) + i) * 1.3;
  if (w.originalName.endsWith("moving_variance")) for (let j = 0; j < n; j++) v[j] = 0.5 + Math.abs(v[j]);
  return tf.tensor(v, w.shape);
}));
await model.save({
  async save(artifacts) {
    const json = {
      format: artifacts.format, generatedBy: artifacts.generatedBy, convertedBy: artifacts.convertedBy,
      modelTopology: artifacts.modelTopology,
      weightsManifest: [{ paths: ["weights.bin"], weights: artifacts.weightSpecs }],
    };
    fs.writeFileSync(path.join(out, "model.json"), JSON.stringify(json));
    fs.writeFileSync(path.join(out, "weights.bin"), Buffer.from(artifacts.weightData));
    return { modelArtifactsInfo: { dateSaved: new Date(), modelTopologyType: "JSON" } };
  },
});
const n = 2;
const x = new Float32Array(n * 6 * 6 * 2);
for (let i = 0; i < x.length; i++) x[i] = Math.cos(0.21 * i) * 1.5;
const y = model.predict(tf.tensor(x, [n, 6, 6, 2]));
fs.writeFileSync(path.join(out, "predictions.json"), JSON.stringify({ shape: [n, 6, 6, 2], inputs: Array.from(x), outputs: Array.from(await y.data()) }));
