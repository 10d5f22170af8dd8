// tests/ort/ort_run.js — runs one ONNX model with ONNX Runtime (CPU) on inputs given as .npy
// files and writes each output as a .npy file: the independent reference of the tests that
// need opsets newer than Debian's onnx package knows (tests/opset/run_opset_tests.py).
// Usage: node ort_run.js MODEL.onnx OUTDIR NAME=FILE.npy ...  → OUTDIR/<k>.npy for output k
// (graph order), and one JSON line {"outputs": [names...]} on stdout. An error (model ONNX
// Runtime refuses, bad file) prints its message on stderr and exits 1.
// .npy support: little-endian version 1.0 files, C order, dtypes float32, float64, int8,
// uint8, int16, uint16, int32, uint32, int64, uint64, bool and float16.
// ONNX Runtime comes from `npm install --ignore-scripts onnxruntime-node@1.30.0` in this folder
// (tools/setup.sh does it); ORT_NODE_PATH may point at another copy.
const fs = require("fs");
const path = require("path");
const ort = require(process.env.ORT_NODE_PATH || path.join(__dirname, "node_modules", "onnxruntime-node"));

// ONNX Runtime 1.30 leaves an empty mat-debug-PID.log in the temporary folder of each process
// that loads it: this process removes its own when it exits (an empty one only).
process.on("exit", () => {
  for (const dir of new Set([require("os").tmpdir(), "/tmp"])) {
    const f = require("path").join(dir, `mat-debug-${process.pid}.log`);
    try {
      if (fs.statSync(f).size === 0) fs.unlinkSync(f);
    } catch (e) {
      // not there
    }
  }
});

// numpy descr (without the byte-order character) ↔ ORT tensor type and typed array.
const TYPES = {
  f4: ["float32", Float32Array], f8: ["float64", Float64Array], i1: ["int8", Int8Array], u1: ["uint8", Uint8Array],
  i2: ["int16", Int16Array], u2: ["uint16", Uint16Array], i4: ["int32", Int32Array], u4: ["uint32", Uint32Array],
  i8: ["int64", BigInt64Array], u8: ["uint64", BigUint64Array], b1: ["bool", Uint8Array],
  f2: ["float16", Uint16Array],  // the binary16 bits
};

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString("latin1", 0, 6) !== "\x93NUMPY") throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString("latin1", start, start + hlen);
  const descr = /'descr':\s*'([<|=>])(\w\d)'/.exec(header);
  const shapeM = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !shapeM || /'fortran_order':\s*True/.test(header)) throw new Error(`${file}: unsupported .npy header ${header}`);
  if (descr[1] === ">") throw new Error(`${file}: big-endian data`);
  const t = TYPES[descr[2]];
  if (!t) throw new Error(`${file}: unsupported dtype ${descr[2]}`);
  const shape = shapeM[1].split(",").map((s) => s.trim()).filter((s) => s.length).map(Number);
  const n = shape.reduce((a, b) => a * b, 1);
  const data = buf.subarray(start + hlen);
  const copy = new ArrayBuffer(n * t[1].BYTES_PER_ELEMENT);
  new Uint8Array(copy).set(data.subarray(0, copy.byteLength));
  let arr = new t[1](copy);
  if (t[0] === "bool") arr = Uint8Array.from(arr, (v) => (v ? 1 : 0));
  return new ort.Tensor(t[0], arr, shape);
}

function writeNpy(file, tensor) {
  const entry = Object.entries(TYPES).find(([, t]) => t[0] === tensor.type);
  if (!entry) throw new Error(`output of type ${tensor.type} cannot be written as .npy`);
  const [code, [, Ctor]] = entry;
  const dims = tensor.dims;
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(", ")})`;
  let header = `{'descr': '${code === "i1" || code === "u1" || code === "b1" ? "|" : "<"}${code}', 'fortran_order': False, 'shape': ${shape}, }`;
  while ((10 + header.length + 1) % 64 !== 0) header += " ";
  header += "\n";
  const pre = Buffer.alloc(10);
  pre.write("\x93NUMPY", 0, "latin1");
  pre[6] = 1;
  pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const data = tensor.type === "bool" ? Uint8Array.from(tensor.data, (v) => (v ? 1 : 0)) : new Ctor(tensor.data);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, "latin1"), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

async function main() {
  const [model, outdir, ...specs] = process.argv.slice(2);
  if (!model || !outdir) throw new Error("usage: node ort_run.js MODEL.onnx OUTDIR NAME=FILE.npy ...");
  const session = await ort.InferenceSession.create(model, {intraOpNumThreads: 1, interOpNumThreads: 1});
  const feeds = {};
  for (const spec of specs) {
    const eq = spec.indexOf("=");
    feeds[spec.slice(0, eq)] = readNpy(spec.slice(eq + 1));
  }
  const results = await session.run(feeds);
  fs.mkdirSync(outdir, {recursive: true});
  session.outputNames.forEach((name, k) => writeNpy(path.join(outdir, `${k}.npy`), results[name]));
  console.log(JSON.stringify({outputs: session.outputNames}));
}
main().catch((e) => { console.error(e.message || String(e)); process.exit(1); });
