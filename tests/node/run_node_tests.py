#!/usr/bin/python3
"""ONNX backend node-test runner for onnxc.

What: runs ONNX's backend node tests (tests/node/generate.py writes them:
CASES/test_*/model.onnx + test_data_set_*/{input,output}_K.pb) through
`compile-model --emit exe` and the generated binary, and compares the binary's
outputs with the reference outputs.

  run_node_tests.py --compiler build/compile-model --cases /tmp/nodecases/node

Conventions:
- A case is UNSUPPORTED (not failed) when a node's op type is missing from
  `compile-model --list-ops`, a node is in a non-default domain ("dom:Op"),
  a node has a subgraph attribute ("Op(subgraph)"), a graph input/output is
  not a tensor (sequence/optional/map), or compile-model exits 3 (reason =
  first line of its stderr). Anything else that goes wrong is a FAIL,
  including a Python exception while handling the case.
- Static compilation needs shape-like tensors to be constants, so graph
  inputs are baked into the model as initializers of the same name, with the
  value from the data set. --bake dtype (default): every input whose element
  type is not in --runtime-dtypes (default: float only). --bake shape: only
  inputs that feed a shape-like operand (Reshape shape, Slice starts, Pad
  pads, axes, sizes, ... see SHAPE_OPERANDS), directly or through the nodes
  that compute it (except Shape and Size), plus string and bfloat16
  inputs, which .npy cannot carry; other inputs of any type stay runtime
  inputs, so int/double kernels run in the binary instead of being folded.
  --bake weights: those, and every graph input but the first, so a Conv's W
  and B are constants the layout pass can repack and its X goes NCHWc.
  Data sets whose baked values differ are compiled separately (one compile
  per distinct set of baked values). Runtime inputs
  with unknown dims get the data set's shape written into the model copy.
  Models with IR version < 4 are bumped to 4 so initializers need not be
  graph inputs.
- Data set files map to graph inputs/outputs by position (input_K -> K-th
  graph input that has no initializer), or by tensor name when every file
  names a graph input.
- Comparison: shapes must match exactly (a difference only in size-1 dims is
  accepted and noted); dtypes must be of the same kind (float, signed,
  unsigned, bool, complex, string; a width difference is noted); floats pass
  when |actual - expected| <= atol + rtol*|expected| (NaN == NaN, inf == inf);
  float16 outputs with rtol at least 2^-9 (two units in float16's last place: onnxc computes
  in float32 and rounds once, onnx's references round each step);
  everything else must be equal.
- --cflags go to compile-model's C build (which adds -Wall -Wextra): CMake
  passes "-O1 -Werror", so a warning in generated C fails the case, plus
  -fsanitize=address,undefined in the sanitized build. A case whose binary or
  compile-model prints a sanitizer report ("runtime error:",
  "AddressSanitizer", "LeakSanitizer") fails whatever the exit status.
- The generic driver (onnxc_main.c) is compiled once per run into
  WORK/onnxc_main.o (compile-model --driver-object) and linked into every case.
- --extra-args passes more compile-model flags to every compile, e.g.
  --extra-args "--channel-block 256" or "--layout nchw".
- --only-blocked (with --extra-args "--channel-block B"): a case is built and
  run only when its final IR (compile-model --dump-ir) stores some value in a
  blocked layout; the others are counted as "plain" (their C is the same at
  every block, so the default run covers them), never as passed. A model
  without a Conv node is plain without asking: only a Conv goes blocked on
  plain inputs (passes/layout.cc).
- --forbid-calls expf,fmaxf,... fails a case whose binary imports one of those
  functions (nm -u): CMake passes the libm functions the kernels must not call.
- --shard I/N (or I,J/N) runs a share of the cases: those of each op (the
  model's first node's op type) are dealt round-robin in name order to N
  shards and the cases dealt to the listed shards run, so every op keeps its
  first case in shard 0. The sanitized build runs shard 0 of 4 (see
  tests/CMakeLists.txt).
- Output is deterministic: failures in case-name order, then the summary,
  the elapsed time, and last the line `N passed, M failed, K unsupported`.
  Exit status 0 iff no case failed (and passed >= --expect-min-pass).

Gaps: bfloat16 runtime inputs cannot be written as .npy (bake them); string
outputs are compared as text but the compiler is not expected to produce
them; no per-op tolerances (pass --rtol/--atol).
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import xml.etree.ElementTree as ET

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

PASS, FAIL, UNSUPPORTED, PLAIN = "pass", "fail", "unsupported", "plain"
DEFAULT_DOMAINS = ("", "ai.onnx")


# Inputs (by position) that fix output shapes or op behaviour; --bake shape
# makes graph inputs feeding them constants.
SHAPE_OPERANDS = {
    "Reshape": (1,), "Expand": (1,), "Tile": (1,), "ConstantOfShape": (0,),
    "Slice": (1, 2, 3, 4), "Pad": (1, 2, 3), "Resize": (1, 2, 3), "Upsample": (1,),
    "Squeeze": (1,), "Unsqueeze": (1,), "Split": (1,), "ReduceSum": (1,),
    "ReduceMean": (1,), "ReduceMax": (1,), "ReduceMin": (1,), "ReduceProd": (1,),
    "ReduceL1": (1,), "ReduceL2": (1,), "ReduceLogSum": (1,),
    "ReduceLogSumExp": (1,), "ReduceSumSquare": (1,), "TopK": (1,),
    "OneHot": (1,), "Range": (0, 1, 2), "CumSum": (1,), "CumProd": (1,), "Trilu": (1,),
    "Dropout": (1, 2), "Compress": (1,), "NonMaxSuppression": (2, 3, 4),
    "CenterCropPad": (1,), "DFT": (1, 2), "STFT": (1, 3), "MaxUnpool": (2,),
    "HannWindow": (0,), "HammingWindow": (0,), "BlackmanWindow": (0,),
    "MelWeightMatrix": (0, 1, 2, 3, 4),
}
NPY_UNSAFE = (TensorProto.STRING, TensorProto.BFLOAT16, TensorProto.UNDEFINED)


def shape_operand_names(graph):
    """The SHAPE_OPERANDS inputs of the graph's nodes and every value they are computed
    from (a window size Cast to float and fed to Range's limit fixes a shape as much as
    Range's own input does). The walk stops at Shape and Size, whose outputs depend on
    their input's shape only."""
    producer = {o: node for node in graph.node for o in node.output if o}
    todo = [node.input[k] for node in graph.node for k in SHAPE_OPERANDS.get(node.op_type, ())
            if k < len(node.input) and node.input[k]]
    names = set()
    while todo:
        v = todo.pop()
        if v in names:
            continue
        names.add(v)
        node = producer.get(v)
        if node is not None and node.op_type not in ("Shape", "Size"):
            todo.extend(i for i in node.input if i)
    return names


class Unsupported(Exception):
    """The case cannot run for a reason that is not the compiler's fault."""


class CaseResult:
    def __init__(self, name):
        self.name = name
        self.status = PASS
        self.reason = ""          # one line; for failures and unsupported cases
        self.detail = ""          # full text (compiler stderr, traceback, ...)
        self.blocking_ops = []    # ops that made the case unsupported
        self.kind = ""            # for unsupported: "ops", "compiler", "runner"
        self.notes = []
        self.seconds = 0.0

    def to_json(self):
        return {"name": self.name, "status": self.status, "reason": self.reason,
                "detail": self.detail, "blocking_ops": self.blocking_ops,
                "kind": self.kind, "notes": self.notes,
                "seconds": round(self.seconds, 3)}


# --------------------------------------------------------------------------
# helpers

def one_line(text, limit=400):
    text = " | ".join(l.strip() for l in str(text).strip().splitlines() if l.strip())
    if len(text) <= limit:
        return text
    half = (limit - 5) // 2
    return text[:half] + " ... " + text[-half:]


def numeric_suffix(path):
    m = re.search(r"(\d+)(\.pb)?$", os.path.basename(path))
    return (int(m.group(1)) if m else -1, path)


SANITIZER_MARKS = ("runtime error:", "AddressSanitizer", "LeakSanitizer")


def sanitizer_report(text):
    """The first line of an ASan/UBSan/LSan report in text, or None."""
    for line in text.splitlines():
        if any(m in line for m in SANITIZER_MARKS):
            return one_line(line, 300)
    return None


def signal_name(rc):
    try:
        return signal.Signals(-rc).name
    except (ValueError, AttributeError):
        return "signal %d" % -rc


def forbidden_calls(exe, names):
    """The functions among `names` (comma-separated) that `exe` imports (nm -u)."""
    wanted = {n for n in names.split(",") if n}
    if not wanted:
        return []
    p = subprocess.run(["nm", "-u", exe], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, check=True)
    return sorted({line.split()[-1].split("@")[0] for line in p.stdout.splitlines()
                   if line.split()} & wanted)


def dtype_name(elem_type):
    try:
        return TensorProto.DataType.Name(elem_type).lower()
    except ValueError:
        return "dtype%d" % elem_type


def list_ops(compiler):
    p = subprocess.run([compiler, "--list-ops"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
    if p.returncode != 0:
        raise RuntimeError("%s --list-ops exited %d: %s"
                           % (compiler, p.returncode, one_line(p.stderr)))
    ops = set()
    for line in p.stdout.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            ops.add(line.split()[0])
    return ops


def blocking_ops(graph, supported):
    """Ops (as summary keys) that keep this graph from being compiled."""
    out = set()
    for node in graph.node:
        if node.domain in DEFAULT_DOMAINS:
            if node.op_type not in supported:
                out.add(node.op_type)
                continue
        else:
            out.add("%s:%s" % (node.domain, node.op_type))
            continue
        for a in node.attribute:
            if a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) \
                    or a.HasField("g") or len(a.graphs):
                out.add("%s(subgraph)" % node.op_type)
    return sorted(out)


def load_tensor(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t


def tensor_key(t):
    """Bytes that identify a tensor's value (not its name)."""
    h = hashlib.sha256()
    h.update(("%d|%s|" % (t.data_type, list(t.dims))).encode())
    try:
        a = numpy_helper.to_array(t)
        if a.dtype == object:
            h.update(repr(a.tolist()).encode())
        else:
            h.update(a.tobytes())
    except Exception:  # odd encodings: fall back to the proto itself
        c = TensorProto()
        c.CopyFrom(t)
        c.name = ""
        h.update(c.SerializeToString())
    return h.hexdigest()


def elem_type(value_info):
    return value_info.type.tensor_type.elem_type


def check_tensor_types(graph):
    for kind, vis in (("input", graph.input), ("output", graph.output)):
        for vi in vis:
            which = vi.type.WhichOneof("value")
            if which != "tensor_type":
                raise Unsupported("runner: graph %s '%s' is %s, not a tensor"
                                  % (kind, vi.name, which))


# --------------------------------------------------------------------------
# comparison

def kind_of(dtype):
    if dtype.kind in "SUO":
        return "string"
    return {"f": "float", "c": "complex", "i": "signed", "u": "unsigned",
            "b": "bool"}.get(dtype.kind, dtype.kind)


def fmt_index(idx):
    return "(" + ",".join(str(int(i)) for i in idx) + ")"


def compare(name, actual, expected, rtol, atol, notes):
    """Returns None if actual matches expected, else a one-line reason."""
    if kind_of(actual.dtype) != kind_of(expected.dtype):
        return "output '%s': dtype %s, expected %s" % (name, actual.dtype, expected.dtype)
    if actual.dtype != expected.dtype:
        notes.append("output '%s': dtype %s, expected %s" % (name, actual.dtype, expected.dtype))
    if actual.shape != expected.shape:
        squeezed = tuple(d for d in actual.shape if d != 1) == \
            tuple(d for d in expected.shape if d != 1)
        if actual.size == expected.size and squeezed:
            notes.append("output '%s': shape %s, expected %s (differs by size-1 dims)"
                         % (name, list(actual.shape), list(expected.shape)))
            actual = actual.reshape(expected.shape)
        else:
            return "output '%s': shape %s, expected %s" % (
                name, list(actual.shape), list(expected.shape))
    if expected.size == 0:
        return None
    kind = kind_of(expected.dtype)
    if expected.dtype == np.float16:
        # onnxc computes a float16 model in float32 and rounds once at each float16 output
        # (frontend/onnx_import.cc); onnx's references round every step to float16. They may
        # differ by a unit or two in float16's last place: 2^-9 relative.
        rtol = max(rtol, 2.0 ** -9)
    if kind in ("float", "complex"):
        a = actual.astype(np.complex128 if kind == "complex" else np.float64)
        e = expected.astype(a.dtype)
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.abs(a - e)
            tol = atol + rtol * np.abs(e)
            ok = (diff <= tol) | (a == e) | (np.isnan(a) & np.isnan(e))
        if ok.all():
            return None
        bad = int((~ok).sum())
        excess = np.where(ok, -np.inf, np.nan_to_num(diff - tol, nan=np.inf))
        worst = np.unravel_index(int(np.argmax(excess)), e.shape)
        finite = np.where(ok | ~np.isfinite(diff), 0.0, diff)
        return ("output '%s': %d/%d elements differ, max abs err %.4g; worst at %s: "
                "got %r expected %r (rtol %g, atol %g)"
                % (name, bad, e.size, float(finite.max()), fmt_index(worst),
                   a[worst].item(), e[worst].item(), rtol, atol))
    if kind == "string":
        a = np.vectorize(lambda s: s.decode() if isinstance(s, bytes) else str(s),
                         otypes=[object])(actual)
        e = np.vectorize(lambda s: s.decode() if isinstance(s, bytes) else str(s),
                         otypes=[object])(expected)
        ok = a == e
    else:
        ok = actual == expected
    ok = np.asarray(ok, dtype=bool).reshape(expected.shape)
    if ok.all():
        return None
    bad = int((~ok).sum())
    first = np.unravel_index(int(np.argmin(ok)), expected.shape)
    return ("output '%s': %d/%d elements differ; first at %s: got %r expected %r"
            % (name, bad, expected.size, fmt_index(first),
               actual[first].item(), expected[first].item()))


# --------------------------------------------------------------------------
# one case

class Runner:
    def __init__(self, args, supported, work):
        self.args = args
        self.supported = supported
        self.work = work
        self.runtime_dtypes = set()
        for n in args.runtime_dtypes.split(","):
            n = n.strip()
            if n:
                self.runtime_dtypes.add(TensorProto.DataType.Value(n.upper()))

    def run_case(self, case_dir):
        name = os.path.basename(case_dir.rstrip("/"))
        r = CaseResult(name)
        t0 = time.time()
        try:
            self._run_case(case_dir, r)
        except Unsupported as e:
            r.status, r.kind, r.reason = UNSUPPORTED, "runner", one_line(e)
        except Exception as e:
            r.status = FAIL
            r.reason = "runner exception: %s: %s" % (type(e).__name__, one_line(e, 300))
            r.detail = traceback.format_exc()
        r.seconds = time.time() - t0
        return r

    def _run_case(self, case_dir, r):
        model = onnx.load(os.path.join(case_dir, "model.onnx"))
        graph = model.graph
        ops = blocking_ops(graph, self.supported)
        if ops:
            r.status, r.kind, r.blocking_ops = UNSUPPORTED, "ops", ops
            r.reason = "unsupported ops: " + ", ".join(ops)
            return
        check_tensor_types(graph)
        if self.args.only_blocked and not any(n.op_type == "Conv" for n in graph.node):
            # Only a Conv goes blocked on plain inputs, and no pass makes one (passes/layout.cc):
            # without one nothing is blocked, so the case needs no --dump-ir to say so.
            r.status, r.reason = PLAIN, "no Conv, so no value in a blocked layout"
            return

        init_names = {t.name for t in graph.initializer}
        inputs = [vi for vi in graph.input if vi.name not in init_names]
        if self.args.bake in ("shape", "weights"):
            shape_names = shape_operand_names(graph)
            if self.args.bake == "weights":
                shape_names |= {vi.name for vi in inputs[1:]}
            to_bake = lambda vi: vi.name in shape_names or elem_type(vi) in NPY_UNSAFE
        else:
            to_bake = lambda vi: elem_type(vi) not in self.runtime_dtypes
        outputs = list(graph.output)
        sets = sorted((os.path.join(case_dir, d) for d in os.listdir(case_dir)
                       if d.startswith("test_data_set_")
                       and os.path.isdir(os.path.join(case_dir, d))), key=numeric_suffix)
        if not sets:
            raise RuntimeError("no test_data_set_* directory")

        # Load every data set and group the sets by their baked values.
        groups = {}   # key -> (baked {name: TensorProto}, shapes {name: dims}, [sets])
        for ds in sets:
            feeds, expected = self._load_set(ds, inputs, outputs)
            baked, shapes, key = {}, {}, []
            for vi in inputs:
                t = feeds[vi.name]
                if t.data_type != elem_type(vi):
                    # Some onnx versions store bfloat16 test inputs as uint16: the case cannot be run as written.
                    raise Unsupported("runner: test data for input '%s' is %s but the model declares %s"
                                      % (vi.name, dtype_name(t.data_type), dtype_name(elem_type(vi))))
                if not to_bake(vi):
                    if self._needs_shape(vi):
                        shapes[vi.name] = list(t.dims)
                        key.append(("shape", vi.name, tuple(t.dims)))
                else:
                    baked[vi.name] = t
                    key.append(("value", vi.name, tensor_key(t)))
            key = tuple(key)
            if key not in groups:
                groups[key] = (baked, shapes, [])
            groups[key][2].append((ds, feeds, expected))
        if len(groups) > 1:
            r.notes.append("%d compiles: baked values or shapes differ across data sets"
                           % len(groups))

        case_work = os.path.join(self.work, r.name)
        if os.path.exists(case_work):
            shutil.rmtree(case_work)
        failures = []
        for gi, (baked, shapes, members) in enumerate(groups.values()):
            gdir = case_work if len(groups) == 1 else os.path.join(case_work, "g%d" % gi)
            os.makedirs(gdir)
            exe = self._compile(model, baked, shapes, gdir, r)
            if exe is None:
                return  # r already says why
            for ds, feeds, expected in members:
                msg = self._run_set(exe, gdir, ds, inputs, outputs, baked, feeds,
                                    expected, r)
                if msg:
                    failures.append(msg if len(sets) == 1
                                    else "%s: %s" % (os.path.basename(ds), msg))
        if failures:
            r.status = FAIL
            r.reason = failures[0]
            r.detail = "\n".join(failures)

    def _needs_shape(self, vi):
        tt = vi.type.tensor_type
        if not tt.HasField("shape"):
            return True
        return any(not d.HasField("dim_value") for d in tt.shape.dim)

    def _load_set(self, ds, inputs, outputs):
        in_files = sorted((f for f in os.listdir(ds) if re.match(r"input_\d+\.pb$", f)),
                          key=numeric_suffix)
        out_files = sorted((f for f in os.listdir(ds) if re.match(r"output_\d+\.pb$", f)),
                           key=numeric_suffix)
        in_t = [load_tensor(os.path.join(ds, f)) for f in in_files]
        out_t = [load_tensor(os.path.join(ds, f)) for f in out_files]
        feeds = self._match(in_t, inputs, "input", ds)
        expected = self._match(out_t, outputs, "output", ds)
        return feeds, expected

    @staticmethod
    def _match(tensors, vis, what, ds):
        names = [vi.name for vi in vis]
        tnames = [t.name for t in tensors]
        if tnames and all(tnames) and set(tnames) == set(names) \
                and len(tnames) == len(names):
            return {t.name: t for t in tensors}
        if len(tensors) != len(vis):
            raise RuntimeError("%s: %d %s files for %d graph %ss"
                               % (os.path.basename(ds), len(tensors), what, len(vis), what))
        return {vi.name: t for vi, t in zip(vis, tensors)}

    def _compile(self, model, baked, shapes, gdir, r):
        m = onnx.ModelProto()
        m.CopyFrom(model)
        g = m.graph
        if baked:
            keep = [vi for vi in g.input if vi.name not in baked]
            del g.input[:]
            g.input.extend(keep)
            for name in sorted(baked):
                t = TensorProto()
                t.CopyFrom(baked[name])
                t.name = name
                g.initializer.append(t)
            if m.ir_version < 4:
                m.ir_version = 4
        for vi in g.input:
            if vi.name in shapes:
                shp = vi.type.tensor_type.shape
                del shp.dim[:]
                for d in shapes[vi.name]:
                    shp.dim.add().dim_value = d
        model_path = os.path.join(gdir, "model.onnx")
        onnx.save(m, model_path)
        build = os.path.join(gdir, "build")
        os.makedirs(build)
        if self.args.only_blocked and not self._blocked(model_path, gdir, r):
            return None
        # Every case links the same generic driver, compiled once per run (same cc and flags).
        cmd = [self.args.compiler, model_path, "-o", build, "--name", "model",
               "--emit", "exe", "--cc", self.args.cc, "--cflags=" + self.args.cflags,
               "--driver-object", os.path.join(self.work, "onnxc_main.o"),
               "--quiet"] + shlex.split(self.args.extra_args)
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               universal_newlines=True, errors="replace",
                               timeout=self.args.compile_timeout)
        except subprocess.TimeoutExpired:
            r.status = FAIL
            r.reason = "compile-model timed out after %d s" % self.args.compile_timeout
            return None
        err = (p.stderr or "").replace(gdir + os.sep, "").replace(gdir, r.name)
        report = sanitizer_report(err + (p.stdout or ""))
        if report:
            r.status = FAIL
            r.reason = "compile-model exit %d with a sanitizer report: %s" % (p.returncode, report)
            r.detail = err + p.stdout
            return None
        if p.returncode == 3:
            r.status, r.kind = UNSUPPORTED, "compiler"
            lines = [l for l in err.splitlines() if l.strip()]
            r.reason = one_line(lines[0]) if lines else "compile-model exit 3 (no message)"
            r.detail = err
            return None
        if p.returncode != 0:
            r.status = FAIL
            what = ("crashed with %s" % signal_name(p.returncode) if p.returncode < 0
                    else "exit %d" % p.returncode)
            r.reason = "compile-model %s: %s" % (what, one_line(err or p.stdout))
            r.detail = err + p.stdout
            return None
        exe = os.path.join(build, "model")
        if not os.path.isfile(exe):
            r.status = FAIL
            r.reason = "compile-model exited 0 but wrote no %s" % "build/model"
            return None
        calls = forbidden_calls(exe, self.args.forbid_calls)
        if calls:
            r.status = FAIL
            r.reason = "the generated binary calls " + ", ".join(calls)
            return None
        return exe

    def _blocked(self, model_path, gdir, r):
        """Whether the final IR stores a value in a blocked layout (NCHW64c...); when it
        does not, r is PLAIN. Compile errors are left to the real compile."""
        cmd = [self.args.compiler, model_path, "-o", os.path.join(gdir, "ir"), "--name", "model",
               "--emit", "c", "--dump-ir", "--quiet"] + shlex.split(self.args.extra_args)
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               universal_newlines=True, errors="replace",
                               timeout=self.args.compile_timeout)
        except subprocess.TimeoutExpired:
            return True
        if p.returncode != 0 or re.search(r"\bNC[A-Z]*\d+c\b", p.stdout):
            return True
        r.status, r.reason = PLAIN, "no value in a blocked layout"
        return False

    def _run_set(self, exe, gdir, ds, inputs, outputs, baked, feeds, expected, r):
        sdir = os.path.join(gdir, os.path.basename(ds))
        os.makedirs(sdir)
        cmd = [exe]
        for k, vi in enumerate(inputs):
            if vi.name in baked:
                continue
            arr = numpy_helper.to_array(feeds[vi.name])
            if feeds[vi.name].data_type == TensorProto.BFLOAT16:
                raise Unsupported("runner: bfloat16 runtime input '%s'" % vi.name)
            path = os.path.join(sdir, "input_%d.npy" % k)
            np.save(path, np.array(arr, order="C", copy=True), allow_pickle=False)
            cmd += ["--input", "%s=%s" % (vi.name, path)]
        out_paths = []
        for k, vi in enumerate(outputs):
            path = os.path.join(sdir, "output_%d.npy" % k)
            out_paths.append(path)
            cmd += ["--output", "%s=%s" % (vi.name, path)]
        cmd.append("--quiet")
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               universal_newlines=True, errors="replace",
                               timeout=self.args.run_timeout)
        except subprocess.TimeoutExpired:
            return "binary timed out after %d s" % self.args.run_timeout
        if p.returncode < 0:
            return ("binary crashed with %s %s" % (signal_name(p.returncode),
                                                   one_line(p.stderr, 200))).rstrip()
        report = sanitizer_report(p.stdout + p.stderr)
        if report:
            return "binary exit %d with a sanitizer report: %s" % (p.returncode, report)
        if p.returncode != 0:
            return "binary exit %d: %s" % (p.returncode, one_line(p.stderr or p.stdout))
        msgs = []
        for vi, path in zip(outputs, out_paths):
            if not os.path.isfile(path):
                msgs.append("output '%s': binary wrote no file" % vi.name)
                continue
            try:
                actual = np.load(path, allow_pickle=False)
            except Exception as e:
                msgs.append("output '%s': unreadable .npy: %s" % (vi.name, one_line(e, 200)))
                continue
            exp = numpy_helper.to_array(expected[vi.name])
            msg = compare(vi.name, actual, exp, self.args.rtol, self.args.atol, r.notes)
            if msg:
                msgs.append(msg)
        return "; ".join(msgs) if msgs else None


# --------------------------------------------------------------------------
# reporting

def write_junit(path, results, elapsed):
    suite = ET.Element("testsuite", name="onnx-node", tests=str(len(results)),
                       failures=str(sum(r.status == FAIL for r in results)),
                       skipped=str(sum(r.status in (UNSUPPORTED, PLAIN) for r in results)),
                       errors="0", time="%.3f" % elapsed)
    for r in results:
        tc = ET.SubElement(suite, "testcase", classname="onnx.node", name=r.name,
                           time="%.3f" % r.seconds)
        if r.status == FAIL:
            ET.SubElement(tc, "failure", message=r.reason).text = r.detail or r.reason
        elif r.status in (UNSUPPORTED, PLAIN):  # not built: never a pass
            ET.SubElement(tc, "skipped", message=r.reason)
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)


def report(results, args, elapsed, out=sys.stdout):
    passed = [r for r in results if r.status == PASS]
    failed = [r for r in results if r.status == FAIL]
    unsup = [r for r in results if r.status == UNSUPPORTED]
    plain = [r for r in results if r.status == PLAIN]
    for r in failed:
        print("FAIL %s: %s" % (r.name, r.reason), file=out)
        if args.verbose and r.detail and r.detail.strip() != r.reason:
            for line in r.detail.rstrip().splitlines():
                print("    " + line, file=out)

    by_op, sole = {}, {}
    for r in unsup:
        for op in r.blocking_ops:
            by_op[op] = by_op.get(op, 0) + 1
        if len(r.blocking_ops) == 1:
            sole[r.blocking_ops[0]] = sole.get(r.blocking_ops[0], 0) + 1
    if by_op:
        print("\nunsupported ops (cases blocked, cases blocked by it alone):", file=out)
        for op, n in sorted(by_op.items(), key=lambda kv: (-kv[1], kv[0])):
            print("  %-40s %4d %4d" % (op, n, sole.get(op, 0)), file=out)
    other = [r for r in unsup if r.kind != "ops"]
    if other:
        print("\nunsupported for other reasons:", file=out)
        for r in other:
            print("  %s: %s" % (r.name, r.reason), file=out)
    noted = [r for r in results if r.notes and r.status != UNSUPPORTED]
    if noted and args.verbose:
        print("\nnotes:", file=out)
        for r in noted:
            for n in r.notes:
                print("  %s: %s" % (r.name, n), file=out)
    elif noted:
        print("\n%d cases have notes (shape/dtype leniency, several compiles); "
              "see --verbose or --json" % len(noted), file=out)
    print("\nelapsed %.1f s" % elapsed, file=out)
    ok = not failed
    if args.expect_min_pass is not None and len(passed) < args.expect_min_pass:
        print("expected at least %d passed, got %d" % (args.expect_min_pass, len(passed)),
              file=out)
        ok = False
    print("%d passed, %d failed, %d unsupported%s" % (
        len(passed), len(failed), len(unsup),
        ", %d plain (not built: no blocked value)" % len(plain) if args.only_blocked else ""), file=out)
    out.flush()
    return ok


def shard_cases(cases, spec):
    """The cases (sorted paths) dealt to the shards of spec ("I/N" or "I,J/N"): each op's cases,
    by the first node's op type, go round-robin in name order to shards 0..N-1."""
    m = re.fullmatch(r"(\d+(?:,\d+)*)/(\d+)", spec)
    if not m:
        raise ValueError("expected I/N or I,J,.../N (e.g. 0/3)")
    n = int(m.group(2))
    keep = {int(i) for i in m.group(1).split(",")}
    if n < 1 or not all(i < n for i in keep):
        raise ValueError("each shard must be below N, and N at least 1")
    dealt = {}
    chosen = []
    for c in cases:
        model = onnx.load(os.path.join(c, "model.onnx"), load_external_data=False)
        nodes = model.graph.node
        key = (nodes[0].domain, nodes[0].op_type) if nodes else ("", "")
        k = dealt.get(key, 0)
        dealt[key] = k + 1
        if k % n in keep:
            chosen.append(c)
    return chosen


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--compiler", required=True, help="path to compile-model")
    ap.add_argument("--cases", required=True, help="directory holding test_* cases")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--filter", default=None, help="regex searched in case names")
    ap.add_argument("--work", default=None, help="work dir (default: temp dir)")
    ap.add_argument("--keep", action="store_true", help="keep the temp work dir")
    ap.add_argument("--cc", default="gcc")
    ap.add_argument("--cflags", default="-O1")
    ap.add_argument("--extra-args", default="",
                    help="more compile-model flags, shell-quoted (e.g. \"--channel-block 256\")")
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--bake", choices=("dtype", "shape", "weights"), default="dtype",
                    help="which graph inputs become constants: those not of "
                         "--runtime-dtypes (default), those feeding shape operands, or "
                         "those and every input but the first")
    ap.add_argument("--only-blocked", action="store_true",
                    help="build and run only the cases whose final IR has a blocked value "
                         "(use with --extra-args \"--channel-block B\")")
    ap.add_argument("--runtime-dtypes", default="float",
                    help="comma-separated ONNX element types kept as runtime inputs; "
                         "inputs of other types are baked in (default: float)")
    ap.add_argument("--compile-timeout", type=int, default=300)
    ap.add_argument("--run-timeout", type=int, default=60)
    ap.add_argument("--junit", default=None, help="write JUnit XML here")
    ap.add_argument("--json", default=None, help="write results as JSON here")
    ap.add_argument("--expect-min-pass", type=int, default=None)
    ap.add_argument("--shard", default=None,
                    help="I/N or I,J,.../N: only the cases dealt to those of N shards, each op's "
                         "cases dealt round-robin in name order (each op's first case is in shard 0)")
    ap.add_argument("--forbid-calls", default="",
                    help="comma-separated functions no generated binary may import "
                         "(nm -u), e.g. expf,fmaxf: a case whose binary does fails")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="full failure details, notes, and progress on stderr")
    # "--cflags -O1" (as CMake and shells pass it) would make argparse read
    # -O1 as an option; join such pairs into "--cflags=-O1" first.
    argv = list(sys.argv[1:] if argv is None else argv)
    joined = []
    i = 0
    while i < len(argv):
        if argv[i] in ("--cflags", "--cc", "--extra-args") and i + 1 < len(argv):
            joined.append(argv[i] + "=" + argv[i + 1])
            i += 2
        else:
            joined.append(argv[i])
            i += 1
    args = ap.parse_args(joined)

    t0 = time.time()
    args.compiler = os.path.abspath(args.compiler)
    try:
        supported = list_ops(args.compiler)
    except Exception as e:
        print("run_node_tests: cannot get the op list: %s" % one_line(e), file=sys.stderr)
        return 1
    if not os.path.isdir(args.cases):
        print("run_node_tests: no such directory: %s" % args.cases, file=sys.stderr)
        return 1
    rx = re.compile(args.filter) if args.filter else None
    cases = sorted(os.path.join(args.cases, d) for d in os.listdir(args.cases)
                   if d.startswith("test_")
                   and os.path.isfile(os.path.join(args.cases, d, "model.onnx"))
                   and (rx is None or rx.search(d)))
    if args.shard:
        try:
            cases = shard_cases(cases, args.shard)
        except ValueError as e:
            print("run_node_tests: --shard %s: %s" % (args.shard, e), file=sys.stderr)
            return 2
    if not cases:
        print("run_node_tests: no cases in %s%s" % (
            args.cases, " matching %r" % args.filter if args.filter else ""), file=sys.stderr)
        return 1

    temp = args.work is None
    work = tempfile.mkdtemp(prefix="onnxc-node-") if temp else os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    runner = Runner(args, supported, work)
    results = []
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
            futs = {ex.submit(runner.run_case, c): c for c in cases}
            for fut in concurrent.futures.as_completed(futs):
                r = fut.result()
                results.append(r)
                if args.verbose:
                    print("[%d/%d] %s %s %s" % (len(results), len(cases), r.status.upper(),
                                                r.name, r.reason), file=sys.stderr)
    finally:
        if temp and not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        elif temp:
            print("work dir kept: %s" % work, file=sys.stderr)
    results.sort(key=lambda r: r.name)
    elapsed = time.time() - t0

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"compiler": args.compiler, "cflags": args.cflags,
                       "elapsed_s": round(elapsed, 1),
                       "passed": sum(r.status == PASS for r in results),
                       "failed": sum(r.status == FAIL for r in results),
                       "unsupported": sum(r.status == UNSUPPORTED for r in results),
                       "plain": sum(r.status == PLAIN for r in results),
                       "cases": [r.to_json() for r in results]}, f, indent=1)
    if args.junit:
        write_junit(args.junit, results, elapsed)
    return 0 if report(results, args, elapsed) else 1


if __name__ == "__main__":
    sys.exit(main())
