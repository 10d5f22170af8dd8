// bench/ort_bench.js — ONNX Runtime (CPU provider) side of bench/run_bench.py: one model, one
// process, the same input file as the onnxc binary.
//
// Usage: node ort_bench.js MODEL.onnx --threads N [--runs R] [--input NAME=FILE.npy]...
//                          [--output FILE.bin] [--inter-op M]
// The session uses N intra-op threads, one inter-op thread, sequential execution and graph
// optimisation level "all"; --inter-op M: parallel execution (independent nodes side by side)
// with M inter-op threads (bench/parallel.py). Inputs are float32 .npy files (C order, little-endian), one per
// named graph input. The first run's first output is written to --output as raw little-endian
// float32 (run_bench.py compares it with onnxc's), then R more runs are timed (R = 0: only the
// first result). Prints one JSON line:
//   {"load_ms", "create_ms", "first_ms", "first_result_ms", "median_ms", "min_ms", "runs"}
// load_ms: require() of onnxruntime-node; create_ms: InferenceSession.create; first_ms: the
// first run; first_result_ms: from process start (performance.timeOrigin) to the end of the first
// run. ONNX Runtime comes from `npm install --ignore-scripts onnxruntime-node@1.30.0`
// (ORT_NODE_PATH names the package folder; bench/README.md).
// Gaps: float32 inputs and outputs only.
const fs = require('fs');
const {performance} = require('perf_hooks');

// ONNX Runtime 1.30 leaves an empty mat-debug-PID.log in the temporary folder of each process
// that loads it: this process removes its own when it exits (an empty one only).
process.on('exit', () => {
  for (const dir of new Set([require('os').tmpdir(), '/tmp'])) {
    const f = require('path').join(dir, `mat-debug-${process.pid}.log`);
    try {
      if (fs.statSync(f).size === 0) fs.unlinkSync(f);
    } catch (e) {
      // not there
    }
  }
});

// A float32 .npy file: {shape, data}. Versions 1 to 3 of the format, '<f4', C order.
function readNpy(path) {
  const buf = fs.readFileSync(path);
  if (buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${path}: not a .npy file`);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + hlen);
  const descr = /'descr':\s*'([^']*)'/.exec(header), fortran = /'fortran_order':\s*(True|False)/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || descr[1] !== '<f4') throw new Error(`${path}: dtype ${descr && descr[1]}, float32 ('<f4') expected`);
  if (!fortran || fortran[1] !== 'False') throw new Error(`${path}: Fortran order not supported`);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s.length).map(Number);
  const n = dims.reduce((a, b) => a * b, 1), off = start + hlen;
  if (buf.length - off < 4 * n) throw new Error(`${path}: ${buf.length - off} data bytes, ${4 * n} expected`);
  const data = new Float32Array(n);  // copy: the file's data need not be 4-byte aligned
  for (let i = 0; i < n; ++i) data[i] = buf.readFloatLE(off + 4 * i);
  return {shape: dims, data};
}

function parseArgs(argv) {
  const a = {model: null, threads: 1, runs: 10, inputs: [], output: null, interOp: 0};
  for (let i = 0; i < argv.length; ++i) {
    const k = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) throw new Error(`${k} needs a value`);
      return argv[++i];
    };
    if (k === '--threads') a.threads = parseInt(val(), 10);
    else if (k === '--runs') a.runs = parseInt(val(), 10);
    else if (k === '--input') a.inputs.push(val());
    else if (k === '--output') a.output = val();
    else if (k === '--inter-op') a.interOp = parseInt(val(), 10);
    else if (!k.startsWith('--') && !a.model) a.model = k;
    else throw new Error(`unknown argument '${k}'`);
  }
  if (!a.model || !(a.threads >= 1) || !(a.runs >= 0) || !(a.interOp >= 0))
    throw new Error('usage: node ort_bench.js MODEL.onnx --threads N [--runs R] [--input NAME=FILE.npy]... [--output FILE.bin] [--inter-op M]');
  return a;
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const t0 = performance.now();
  const ort = require(process.env.ORT_NODE_PATH || 'onnxruntime-node');
  const t1 = performance.now();
  const session = await ort.InferenceSession.create(a.model, {
    intraOpNumThreads: a.threads, interOpNumThreads: a.interOp || 1, executionMode: a.interOp ? 'parallel' : 'sequential',
    graphOptimizationLevel: 'all'});
  const t2 = performance.now();
  const feeds = {};
  for (const spec of a.inputs) {
    const eq = spec.indexOf('=');
    const name = spec.slice(0, eq), t = readNpy(spec.slice(eq + 1));
    feeds[name] = new ort.Tensor('float32', t.data, t.shape);
  }
  for (const name of session.inputNames)
    if (!(name in feeds)) throw new Error(`no --input for graph input '${name}'`);
  const t3 = performance.now();
  const first = await session.run(feeds);
  const t4 = performance.now();
  if (a.output) {
    const out = first[session.outputNames[0]];
    if (out.type !== 'float32') throw new Error(`output '${session.outputNames[0]}' is ${out.type}, float32 expected`);
    fs.writeFileSync(a.output, Buffer.from(out.data.buffer, out.data.byteOffset, out.data.byteLength));
  }
  const times = [];
  for (let k = 0; k < a.runs; ++k) {
    const s = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - s) / 1e6);
  }
  times.sort((x, y) => x - y);
  const n = times.length;
  const median = n ? (n % 2 ? times[(n - 1) / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2])) : null;
  console.log(JSON.stringify({
    load_ms: t1 - t0, create_ms: t2 - t1, first_ms: t4 - t3, first_result_ms: t4,
    median_ms: median, min_ms: n ? times[0] : null, runs: n}));
}
main().catch((e) => { console.error(`ort_bench.js: ${e.message || e}`); process.exit(1); });
