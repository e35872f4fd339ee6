// ONNX Runtime peer for `telar infer`: median latency of an ONNX model at a batch size.
//   NODE_PATH=$(bench/peer/install_ort.sh)/node_modules \
//     node bench/peer/ort_infer.js MODEL.onnx --input 3x224x224 --batch 1 --threads 2 --repeats 30
// Prints one JSON line: latency_ms_median, samples_per_s, threads, ort.
const ort = require('onnxruntime-node');

function option(args, name, fallback) {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : fallback;
}

async function main() {
  const args = process.argv.slice(2);
  const file = args[0];
  const dims = option(args, '--input', '3x224x224').split('x').map(Number);
  const batch = Number(option(args, '--batch', '1'));
  const threads = Number(option(args, '--threads', '1'));
  const warmup = Number(option(args, '--warmup', '5'));
  const repeats = Number(option(args, '--repeats', '30'));
  // ORT's best CPU setting: all graph optimisations, the given intra-op threads, one inter-op.
  const session = await ort.InferenceSession.create(file, {
    intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all',
    executionMode: 'sequential'});
  const shape = [batch, ...dims];
  const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
  for (let i = 0; i < data.length; ++i) data[i] = Math.random();
  const feeds = {[session.inputNames[0]]: new ort.Tensor('float32', data, shape)};
  const times = [];
  for (let i = 0; i < warmup + repeats; ++i) {
    const t = process.hrtime.bigint();
    await session.run(feeds);
    if (i >= warmup) times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)];
  console.log(JSON.stringify({latency_ms_median: median, samples_per_s: batch / median * 1e3,
                              threads, ort: ort.env.versions.common}));
}

main().catch(e => { console.error(`ort_infer.js: ${e.message}`); process.exit(2); });
