// Usage: node run.mjs MODEL.onnx INPUT.json
// INPUT.json: {"features": [[...], ...], "features_y": [[...], ...] (metric only)}.
// Prints one JSON object: every graph output as a flat array of numbers,
// plus the model's metadata_props. Runs on ONNX Runtime's CPU provider in
// float64, so its arithmetic is ONNX Runtime's own, not pairfed's.
import { readFileSync } from 'node:fs';
import * as ort from 'onnxruntime-node';

const [modelPath, inputPath] = process.argv.slice(2);
const input = JSON.parse(readFileSync(inputPath, 'utf8'));
const session = await ort.InferenceSession.create(readFileSync(modelPath), { executionProviders: ['cpu'] });
const feeds = {};
for (const name of session.inputNames) {
  const rows = input[name];
  if (!rows) throw new Error(`input ${name} missing from ${inputPath}`);
  const d = rows[0].length;
  const flat = new Float64Array(rows.length * d);
  rows.forEach((r, i) => r.forEach((v, j) => { flat[i * d + j] = v === null ? NaN : v; }));
  feeds[name] = new ort.Tensor('float64', flat, [rows.length, d]);
}
const out = await session.run(feeds);
const res = { outputs: {}, dims: {} };
for (const name of session.outputNames) {
  res.outputs[name] = Array.from(out[name].data);
  res.dims[name] = out[name].dims;
}
process.stdout.write(JSON.stringify(res) + '\n');
