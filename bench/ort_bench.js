// bench/ort_bench.js — ONNX Runtime (CPU) latency of one model, for bench/run_bench.py.
// Usage: node ort_bench.js MODEL.onnx RUNS THREADS NAME=d0,d1,... — feeds a fixed input of that
// shape to each named input and prints one JSON line {"median_ms":..,"min_ms":..}.
// ONNX Runtime comes from `npm install --ignore-scripts onnxruntime-node@1.30.0` (bench/README.md).
const ort = require(process.env.ORT_NODE_PATH || "onnxruntime-node");

async function main() {
  const [model, runsS, threadsS, ...inputs] = process.argv.slice(2);
  const runs = parseInt(runsS, 10), threads = parseInt(threadsS, 10);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all'});
  const feeds = {};
  for (const spec of inputs) {
    const [name, dims] = spec.split('=');
    const shape = dims.split(',').map(Number);
    const n = shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(n);
    for (let i = 0; i < n; ++i) data[i] = Math.sin(i * 0.001);
    feeds[name] = new ort.Tensor('float32', data, shape);
  }
  await session.run(feeds);  // warm-up
  const times = [];
  for (let k = 0; k < runs; ++k) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  console.log(JSON.stringify({median_ms: times[Math.floor(times.length / 2)], min_ms: times[0]}));
}
main().catch((e) => { console.error(e.message || e); process.exit(1); });
