// Runs an ONNX model in ONNX Runtime (onnxruntime-node) on a NumPy .npy input and writes its
// first output as .npy: the peer telar's exported and imported models are checked against.
//   NODE_PATH=$(bench/peer/install_ort.sh)/node_modules node bench/peer/ort_run.js MODEL X.npy Y.npy
// With --accuracy IMAGES.npy LABELS.npy instead of X/Y: prints {"accuracy", "samples"} of the
// model's argmax over the labels (float32 images, labels as float32 class numbers).
const fs = require('fs');
const ort = require('onnxruntime-node');

function readNpy(file) {
  const buf = fs.readFileSync(file);
  const headerLen = buf.readUInt16LE(8);
  const header = buf.toString('latin1', 10, 10 + headerLen);
  if (!header.includes("'descr': '<f4'") || header.includes("'fortran_order': True"))
    throw new Error(`${file}: not a C-order float32 .npy`);
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',').filter(s => s.trim()).map(Number);
  const start = 10 + headerLen;
  const data = new Float32Array(buf.buffer.slice(buf.byteOffset + start, buf.byteOffset + buf.length));
  return {shape, data};
}

function writeNpy(file, shape, data) {
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre.writeUInt8(1, 6);
  pre.writeUInt8(0, 7);
  pre.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'),
                                       Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

async function run(session, x) {
  const feeds = {[session.inputNames[0]]: new ort.Tensor('float32', x.data, x.shape)};
  const out = await session.run(feeds);
  return out[session.outputNames[0]];
}

async function main() {
  const args = process.argv.slice(2);
  const session = await ort.InferenceSession.create(args[0], {intraOpNumThreads: 1});
  if (args[1] === '--accuracy') {
    const images = readNpy(args[2]), labels = readNpy(args[3]);
    const n = images.shape[0], per = images.data.length / n, batch = 256;
    let correct = 0;
    for (let s = 0; s < n; s += batch) {
      const b = Math.min(batch, n - s);
      const y = await run(session, {shape: [b, ...images.shape.slice(1)],
                                    data: images.data.subarray(s * per, (s + b) * per)});
      const classes = y.dims[1];
      for (let i = 0; i < b; ++i) {
        let best = 0;
        for (let c = 1; c < classes; ++c) if (y.data[i * classes + c] > y.data[i * classes + best]) best = c;
        if (best === labels.data[s + i]) ++correct;
      }
    }
    console.log(JSON.stringify({accuracy: correct / n, samples: n}));
    return;
  }
  const y = await run(session, readNpy(args[1]));
  writeNpy(args[2], y.dims, y.data);
}

main().catch(e => { console.error(`ort_run.js: ${e.message}`); process.exit(2); });
