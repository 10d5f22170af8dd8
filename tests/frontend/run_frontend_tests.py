#!/usr/bin/env python3
"""Importer and CLI tests that need a working model: external data inside the model's
folder, symbolic dimensions fixed with --input-shape, initializers listed as graph inputs
(IR version 3), nodes stored out of topological order, Constant-only outputs, --emit so and
--emit c. Expected outputs are computed with numpy, independently of onnxc.
Usage: run_frontend_tests.py --compiler build/compile-model [--cflags "-O1 -fsanitize=address,undefined"].
A sanitizer report in the output of compile-model or a generated binary fails the check.
Ends with "N passed, M failed".
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def vi(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, shape)


def make(nodes, inputs, outputs, inits=(), opset=13, ir_version=None):
    m = helper.make_model(helper.make_graph(nodes, "g", inputs, outputs, list(inits)),
                          opset_imports=[helper.make_opsetid("", opset)])
    if ir_version:
        m.ir_version = ir_version
    return m


def sanitizer_check(p, what):
    for line in (p.stdout or "").splitlines() + (p.stderr or "").splitlines():
        if "runtime error:" in line or "Sanitizer" in line:
            raise AssertionError(f"sanitizer report from {what}: {line}")
    return p


class Runner:
    def __init__(self, compiler, work, cflags):
        self.compiler, self.work, self.cflags, self.results = compiler, work, cflags, []

    def compile(self, name, m, extra=(), subdir=None):
        d = os.path.join(self.work, subdir or name)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, name + ".onnx")
        if isinstance(m, onnx.ModelProto):
            with open(path, "wb") as f:
                f.write(m.SerializeToString())
        out = os.path.join(self.work, name + "_out")
        p = subprocess.run([self.compiler, path, "-o", out, "--name", "m", "--quiet", "--cflags=" + self.cflags, *extra],
                           capture_output=True, text=True, timeout=300)
        return sanitizer_check(p, "compile-model"), out

    def run(self, out, inputs, outputs):
        args = []
        for k, v in inputs.items():
            f = os.path.join(out, f"in_{k}.npy")
            np.save(f, v)
            args += ["--input", f"{k}={f}"]
        for k in outputs:
            args += ["--output", f"{k}={os.path.join(out, 'out_' + k + '.npy')}"]
        p = subprocess.run([os.path.join(out, "m"), "--quiet", *args], capture_output=True, text=True, timeout=60)
        sanitizer_check(p, "the binary")
        if p.returncode != 0:
            raise RuntimeError(f"binary failed: {p.stderr}")
        return {k: np.load(os.path.join(out, "out_" + k + ".npy")) for k in outputs}

    def check(self, name, fn):
        try:
            fn()
            print(f"ok   {name}")
            self.results.append(True)
        except Exception as e:
            print(f"FAIL {name}: {e}")
            self.results.append(False)


def expect(cond, msg):
    if not cond:
        raise AssertionError(msg)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compiler", required=True)
    ap.add_argument("--cflags", default="-O1", help="compile-model --cflags for the generated C")
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory(prefix="onnxc-frontend-") as work:
        r = Runner(a.compiler, work, a.cflags)

        def external_data():
            d = os.path.join(work, "ext")
            os.makedirs(os.path.join(d, "data"), exist_ok=True)
            b = rng.standard_normal(6).astype(np.float32)
            with open(os.path.join(d, "data", "w.bin"), "wb") as f:
                f.write(b"\0" * 12 + b.tobytes())
            w = TensorProto()
            w.name, w.data_type = "b", TensorProto.FLOAT
            w.dims.extend([6])
            w.data_location = TensorProto.EXTERNAL
            for k, v in (("location", "data/w.bin"), ("offset", "12"), ("length", "24")):
                e = w.external_data.add()
                e.key, e.value = k, v
            m = make([helper.make_node("Add", ["x", "b"], ["y"])], [vi("x", [2, 6])], [vi("y", [2, 6])], [w])
            p, out = r.compile("ext", m, subdir="ext")
            expect(p.returncode == 0, p.stderr)
            x = rng.standard_normal((2, 6)).astype(np.float32)
            y = r.run(out, {"x": x}, ["y"])["y"]
            expect(np.allclose(y, x + b, atol=1e-6), "wrong result")

        def symbolic_override():
            m = make([helper.make_node("Relu", ["x"], ["y"])], [vi("x", ["N", 5])], [vi("y", ["N", 5])])
            p, out = r.compile("sym", m, ["--input-shape", "x=3,5"])
            expect(p.returncode == 0, p.stderr)
            x = rng.standard_normal((3, 5)).astype(np.float32)
            expect(np.array_equal(r.run(out, {"x": x}, ["y"])["y"], np.maximum(x, 0)), "wrong result")
            p, _ = r.compile("sym_bad", m, ["--input-shape", "x=3,5,7"])
            expect(p.returncode == 2 and "rank" in p.stderr, "rank mismatch not reported: " + p.stderr)
            p, _ = r.compile("sym_bad2", m, ["--input-shape", "nope=3,5"])
            expect(p.returncode == 2 and "'nope'" in p.stderr, "unknown input not reported: " + p.stderr)

        def initializer_as_input():
            b = rng.standard_normal(4).astype(np.float32)
            m = make([helper.make_node("Mul", ["x", "b"], ["y"])], [vi("x", [4]), vi("b", [4])], [vi("y", [4])],
                     [numpy_helper.from_array(b, "b")], opset=8, ir_version=3)
            p, out = r.compile("initin", m)
            expect(p.returncode == 0, p.stderr)
            x = rng.standard_normal(4).astype(np.float32)
            expect(np.allclose(r.run(out, {"x": x}, ["y"])["y"], x * b), "wrong result")

        def unsorted_nodes():
            n1 = helper.make_node("Relu", ["t"], ["y"], name="second")
            n2 = helper.make_node("Neg", ["x"], ["t"], name="first")
            m = make([n1, n2], [vi("x", [3])], [vi("y", [3])])
            p, out = r.compile("unsorted", m)
            expect(p.returncode == 0, p.stderr)
            x = np.array([1, -2, 3], np.float32)
            expect(np.array_equal(r.run(out, {"x": x}, ["y"])["y"], np.maximum(-x, 0)), "wrong result")

        def outputs_of_every_kind():
            # a computed output, an output that is a graph input, a constant output, an output listed twice
            c = numpy_helper.from_array(np.array([1.5, -2], np.float32), "c")
            m = make([helper.make_node("Abs", ["x"], ["y"])], [vi("x", [2])],
                     [vi("y", [2]), vi("x", [2]), vi("c", [2]), vi("y", [2])], [c])
            p, out = r.compile("outs", m)
            expect(p.returncode == 0, p.stderr)
            x = np.array([-3, 4], np.float32)
            args = ["--quiet", "--input", f"x={out}/x.npy"]
            np.save(f"{out}/x.npy", x)
            for k in range(4):
                args += ["--output", f"{['y', 'x', 'c', 'y'][k]}={out}/o{k}.npy"]
            # names repeat: the binary writes outputs by name, so check the first three by name
            q = sanitizer_check(subprocess.run([f"{out}/m", *args[:3 + 6]], capture_output=True, text=True), "the binary")
            expect(q.returncode == 0, q.stderr)
            expect(np.array_equal(np.load(f"{out}/o0.npy"), np.abs(x)), "computed output")
            expect(np.array_equal(np.load(f"{out}/o1.npy"), x), "input passed through")
            expect(np.array_equal(np.load(f"{out}/o2.npy"), np.array([1.5, -2], np.float32)), "constant output")

        def emit_so_and_c():
            m = make([helper.make_node("Sigmoid", ["x"], ["y"])], [vi("x", [4])], [vi("y", [4])])
            p, out = r.compile("so", m, ["--emit", "so"])
            expect(p.returncode == 0 and os.path.exists(os.path.join(out, "libm.so")), p.stderr)
            p, out = r.compile("conly", m, ["--emit", "c"])
            expect(p.returncode == 0, p.stderr)
            expect(sorted(os.listdir(out)) == ["Makefile", "m.c", "m.h", "m.weights", "onnxc_main.c", "onnxc_runtime.c",
                                               "onnxc_runtime.h", "onnxc_types.h"], str(os.listdir(out)))
            # The Makefile builds with the flags compile-model used (here --cflags).
            with open(os.path.join(out, "Makefile")) as f:
                mk = f.read().splitlines()
            expect(f"CFLAGS ?= {r.cflags}" in mk, "Makefile CFLAGS: " + str([l for l in mk if l.startswith("CFLAGS")]))
            q = subprocess.run(["make", "-s", "-C", out], capture_output=True, text=True)
            expect(q.returncode == 0 and os.path.exists(os.path.join(out, "m")), q.stderr)

        r.check("external data inside the model folder", external_data)
        r.check("symbolic dims fixed by --input-shape", symbolic_override)
        r.check("initializers listed as graph inputs (IR 3)", initializer_as_input)
        r.check("nodes out of topological order", unsorted_nodes)
        r.check("graph outputs: computed, input, constant, repeated", outputs_of_every_kind)
        r.check("--emit so and --emit c with its Makefile", emit_so_and_c)
        passed = sum(r.results)
        print(f"{passed} passed, {len(r.results) - passed} failed")
        return 0 if passed == len(r.results) else 1


if __name__ == "__main__":
    sys.exit(main())
