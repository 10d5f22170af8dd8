"""tests/ort/ort_run.py — runs one ONNX model with ONNX Runtime (CPU provider, one thread) on
inputs given as .npy files and writes each output as a .npy file: the independent reference
of the tests that need opsets newer than Debian's onnx package knows
(tests/opset/run_opset_tests.py).

Usage: .venv/bin/python tests/ort/ort_run.py MODEL.onnx OUTDIR NAME=FILE.npy ...
  → OUTDIR/<k>.npy for output k (graph order), and one JSON line {"outputs": [names...],
  "version": "1.31.1"} on stdout. An error (a model ONNX Runtime refuses, a bad file) prints
  its message on stderr and exits 1. `ort_run.py --version` prints ONNX Runtime's version.

ONNX Runtime is the PyPI package pinned in requirements.txt, installed into the project's
environment .venv by tools/setup.sh. A separate process per model, so that a crash of ONNX
Runtime on a model fails that case and not the whole test run.
"""
import json
import os
import sys


def main(argv):
    if argv[1:] == ["--version"]:
        import onnxruntime as ort
        print(ort.__version__)
        return 0
    if len(argv) < 3:
        print("usage: ort_run.py MODEL.onnx OUTDIR NAME=FILE.npy ...", file=sys.stderr)
        return 2
    model, outdir, specs = argv[1], argv[2], argv[3:]
    try:
        import numpy as np
        import onnxruntime as ort
        feeds = {}
        for spec in specs:
            name, eq, path = spec.partition("=")
            if not eq:
                raise ValueError(f"{spec!r}: expected NAME=FILE.npy")
            feeds[name] = np.load(path, allow_pickle=False)
        o = ort.SessionOptions()
        o.intra_op_num_threads = 1
        o.inter_op_num_threads = 1
        o.log_severity_level = 3  # errors only: the message comes back as the exception
        s = ort.InferenceSession(model, o, providers=["CPUExecutionProvider"])
        names = [x.name for x in s.get_outputs()]
        results = s.run(names, feeds)
        os.makedirs(outdir, exist_ok=True)
        for k, r in enumerate(results):
            np.save(os.path.join(outdir, f"{k}.npy"), np.asarray(r))
    except Exception as e:  # any refusal or bad file: one line, exit 1
        print(f"{type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print(json.dumps({"outputs": names, "version": ort.__version__}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
