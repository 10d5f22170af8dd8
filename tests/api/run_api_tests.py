#!/usr/bin/python3
"""Tests of the generated code's API: instances, symbols, the Python wrapper, bad input, threads.

  run_api_tests.py link    --compiler build/compile-model --cases NODECASES --work DIR
  run_api_tests.py python  --compiler build/compile-model --cases NODECASES --work DIR
  run_api_tests.py bad     --compiler build/compile-model --cases NODECASES --work DIR [--sanitize address]
  run_api_tests.py threads --compiler build/compile-model --zoo ZOO --work DIR [--sanitize thread|address]
                           [--threads 8] [--runs 20]
  run_api_tests.py cpu     --compiler build/compile-model --cases NODECASES --work DIR

link: six ONNX node-test models (conv, gemm with their weights baked into NAME.weights, split
with three outputs, gather with an int64 input, land with bool inputs and output, equal with
int32 inputs and a bool output) linked statically into one C program
(api_link.c; with gcc and with clang), and their shared libraries dlopen'ed into one process
(api_dlopen.c); every output against ONNX's reference outputs. Also: each model's object and
.so define only NAME_* symbols (nm); the header's example builds and runs; the generated
Makefile builds; the driver onnxc_main.c compiled once to an object links with two models.
python: the six models through compile-model --emit python, imported into this process:
outputs against ONNX's references, and wrong shape/dtype/argument count, closed models, bad
weights and threads.
bad: api_bad.c, bad input to the C API (NULL handles and buffers, wrong sizes, destroy twice,
run after destroy, weights of another model, of another format version, truncated).
threads: api_threads.c on mobilenet_v2 (PyTorch's reference from the zoo): THREADS threads with
their own instances, then with instances made by NAME_create_sharing, RUNS inferences each,
all bit-for-bit equal to one instance's output; --sanitize thread builds with clang's TSan and
without OpenMP (libgomp is not TSan-instrumented), --sanitize address with clang's ASan.

cpu: the CPU check (onnxc_check_cpu): the conv model built with -mavx512er (an extension only
the Xeon Phi has) must be refused by every create function of the C API (api_cpu.c:
ONNXC_ERR_TARGET, *ctx NULL, a detail naming AVX-512ER), by the Python wrapper (Error, status
13) and by the executable (exit 1); with the unsafe skip it runs, where the CPU has AVX-512F.

References are ONNX's node-test outputs (test_data_set_0) and PyTorch's zoo outputs, never
onnxc's own, except the bit-for-bit comparison of threaded runs with a single run. A sanitizer
report in any program's output fails the test. Prints each step's time; exit 0 iff all pass.
"""

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))

# name: (node test case, graph inputs baked into the model as initializers, i.e. weights)
MODELS = {
    "conv": ("test_conv_with_strides_padding", ["W"]),
    "gemm": ("test_gemm_all_attributes", ["b", "c"]),
    "split": ("test_split_equal_parts_1d_opset18", []),
    "gather": ("test_gather_0", []),
    "land": ("test_and2d", []),   # bool inputs and output
    "equal": ("test_equal", []),  # int32 inputs, bool output
}
WARN = ["-Wall", "-Wextra", "-Werror"]
RTOL, ATOL = 1e-3, 1e-5

results = []


def report(ok, what, detail=""):
    results.append(bool(ok))
    print(f"{'ok  ' if ok else 'FAIL'} {what}" + (f"\n     {detail}" if detail and not ok else ""), flush=True)
    return ok


# LLVM's libomp (clang -fopenmp) leaks its thread-team structures when the thread count
# changes; LeakSanitizer reports them at exit. Leaks allocated inside libomp are not ours.
LSAN_SUPPRESSIONS = "leak:libomp.so\n"


def sanitizer_report(text):
    return "Sanitizer" in text or "runtime error:" in text


def run(cmd, what, cwd=None, timeout=900, quiet_ok=False):
    """Runs cmd; reports a failure (exit status or sanitizer report) with its output."""
    t0 = time.monotonic()
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, errors="replace", timeout=timeout)
    out = p.stdout + p.stderr
    ok = p.returncode == 0 and not sanitizer_report(out)
    if not ok or not quiet_ok:
        report(ok, f"{what} ({time.monotonic() - t0:.1f} s)", f"$ {shlex.join(cmd)}\n{out[-6000:]}")
    return ok, out


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def prepare(name, cases, work):
    """Writes work/NAME.onnx (baked inputs as initializers) and work/NAME.in<k>.bin; returns
    (runtime inputs as {name: array}, reference outputs as [(name, array)])."""
    case, baked = MODELS[name]
    d = os.path.join(cases, case)
    m = onnx.load(os.path.join(d, "model.onnx"))
    data = os.path.join(d, "test_data_set_0")
    ins = [load_pb(os.path.join(data, f"input_{k}.pb")) for k in range(len(m.graph.input))]
    refs = [(o.name, load_pb(os.path.join(data, f"output_{k}.pb"))) for k, o in enumerate(m.graph.output)]
    feeds = {}
    keep = []
    for vi, a in zip(m.graph.input, ins):
        if vi.name in baked:
            m.graph.initializer.append(numpy_helper.from_array(a, vi.name))
        else:
            keep.append(vi)
            feeds[vi.name] = a
    del m.graph.input[:]
    m.graph.input.extend(keep)
    onnx.save(m, os.path.join(work, name + ".onnx"))
    for k, vi in enumerate(keep):
        np.ascontiguousarray(feeds[vi.name]).tofile(os.path.join(work, f"{name}.in{k}.bin"))
    return feeds, refs


def compile_model(args, name, work, emit, cflags):
    out = os.path.join(work, name)
    shutil.rmtree(out, ignore_errors=True)
    cmd = [args.compiler, os.path.join(work, name + ".onnx"), "-o", out, "--name", name, "--emit", emit, "--quiet"]
    if emit != "c":
        cmd.append("--cflags=" + cflags)
    ok, _ = run(cmd, f"compile-model {name} --emit {emit}", quiet_ok=True)
    return ok


def compare(what, got, ref):
    ok = got.shape == ref.shape and got.dtype == ref.dtype and np.allclose(got, ref, rtol=RTOL, atol=ATOL)
    err = float(np.max(np.abs(got.astype(np.float64) - ref))) if got.shape == ref.shape and got.size else 0.0
    return report(ok, f"{what} matches ONNX's reference (max abs error {err:.3g})",
                  f"got {got.dtype}{got.shape}, expected {ref.dtype}{ref.shape}")


def compare_files(work, name, refs, middle):
    for k, (oname, ref) in enumerate(refs):
        path = os.path.join(work, f"{name}.{middle}{k}.bin")
        got = np.fromfile(path, dtype=ref.dtype).reshape(ref.shape) if os.path.exists(path) else np.zeros(0)
        compare(f"{name} output '{oname}' ({middle.rstrip('.')}{k})", got, ref)


def check_symbols(what, path, name, dynamic):
    cmd = ["nm", "-D" if dynamic else "-g", "--defined-only", path]
    p = subprocess.run(cmd, capture_output=True, text=True)
    syms = [line.split()[-1] for line in p.stdout.splitlines() if line.strip()]
    # ASan adds an ODR indicator next to each global (__odr_asan.NAME_info) in sanitized builds
    foreign = [s for s in syms if not s.startswith(name + "_") and not s.startswith(f"__odr_asan.{name}_")]
    return report(p.returncode == 0 and syms and not foreign,
                  f"{what} defines only {name}_* symbols ({len(syms)}: {', '.join(syms)})",
                  f"other symbols: {foreign} ({p.stderr.strip()})")


def header_example(header):
    """The C example in the header's opening comment."""
    text = open(header).read()
    comment = text[: text.index("*/")]
    lines = comment[comment.index(" * Example") :].splitlines()[1:]
    return "\n".join(re.sub(r"^ \*( {3})?", "", line) for line in lines) + "\n"


# ---------------------------------------------------------------- link


def test_link(args):
    work = args.work
    cflags = " ".join(["-O1", "-Werror"] + args.cflags)
    feeds, refs = {}, {}
    for name in MODELS:
        feeds[name], refs[name] = prepare(name, args.cases, work)
        if not compile_model(args, name, work, "so", cflags):
            return
        check_symbols(f"lib{name}.so", os.path.join(work, name, f"lib{name}.so"), name, True)
    incs = [f"-I{os.path.join(work, n)}" for n in MODELS] + [f"-I{HERE}"]
    for cc in ("gcc", "clang"):
        # clang warns that it cannot vectorize `omp simd` loops that UBSan instruments
        quiet = ["-Wno-pass-failed"] if cc == "clang" and any("-fsanitize" in f for f in args.cflags) else []
        objs = []
        for name in MODELS:
            obj = os.path.join(work, f"{name}.{cc}.o")
            ok, _ = run([cc, "-std=c11", "-O1", "-fopenmp", *WARN, *quiet, *args.cflags, "-c", os.path.join(work, name, name + ".c"),
                         "-o", obj], f"{cc}: {name}.c to an object", quiet_ok=True)
            if not ok:
                return
            check_symbols(f"{cc}: {name}.o", obj, name, False)
            objs.append(obj)
        exe = os.path.join(work, f"api_link_{cc}")
        ok, _ = run([cc, "-std=c11", "-O1", "-fopenmp", "-pthread", *WARN, *args.cflags, *incs, os.path.join(HERE, "api_link.c"),
                     *objs, "-Wl,--wrap=omp_set_num_threads", "-lm", "-o", exe], f"{cc}: link the six models statically into one program")
        if not ok:
            return
        for f in os.listdir(work):
            if ".out" in f:
                os.remove(os.path.join(work, f))
        ok, out = run([exe, work], f"{cc}: api_link (the six models in one static program)")
        print("     " + "\n     ".join(out.strip().splitlines()))
        for name in MODELS:
            compare_files(work, name, refs[name], "out")

    exe = os.path.join(work, "api_dlopen")
    ok, _ = run(["gcc", "-std=c11", "-O1", *WARN, *args.cflags, f"-I{os.path.join(work, 'conv')}", f"-I{HERE}",
                 os.path.join(HERE, "api_dlopen.c"), "-ldl", "-o", exe], "build api_dlopen")
    if ok:
        ok, out = run([exe, work, *MODELS], "api_dlopen (the six shared libraries in one process, RTLD_GLOBAL)")
        print("     " + "\n     ".join(out.strip().splitlines()))
        for name in MODELS:
            compare_files(work, name, refs[name], "dl.out")

    # The header's example, as documented.
    conv = os.path.join(work, "conv")
    with open(os.path.join(conv, "example.c"), "w") as f:
        f.write(header_example(os.path.join(conv, "conv.h")))
    ok, _ = run(["gcc", "-std=c11", "-O1", "-fopenmp", *WARN, *args.cflags, "example.c", "conv.c", "-lm", "-o", "example"],
                "the example in conv.h builds", cwd=conv)
    if ok:
        ok, out = run(["./example"], "the example in conv.h runs", cwd=conv)
        report(out.startswith("y[0] = "), f"the example prints the first output: {out.strip()}")

    # The generated Makefile: the executable (through onnxc_main.o) and the library.
    split = os.path.join(work, "split")
    ok, _ = run(["make", "-s", "-C", split, "split", "libsplit.so", f"CFLAGS=-O1 {' '.join(args.cflags)}"], "make in split/ (Makefile)")
    if ok:
        np.save(os.path.join(work, "split_in.npy"), np.fromfile(os.path.join(work, "split.in0.bin"), np.float32))
        run([os.path.join(split, "split"), "--quiet", "--input", os.path.join(work, "split_in.npy"), "--output",
             f"output_2={os.path.join(work, 'split.make.out1.bin')}"], "the Makefile's executable runs")
        got = np.fromfile(os.path.join(work, "split.make.out1.bin"), np.float32)
        compare("split's Makefile build, output 'output_2'", got, refs["split"][1][1])

    # The driver compiled once, linked with two different models.
    main_o = os.path.join(work, "onnxc_main.o")
    ok, _ = run(["gcc", "-std=c11", "-O1", *WARN, *args.cflags, "-c", os.path.join(conv, "onnxc_main.c"), "-o", main_o],
                "onnxc_main.c compiled once")
    for name in ("conv", "gemm") if ok else ():
        d = os.path.join(work, name)
        exe = os.path.join(work, f"{name}_cli")
        ok, _ = run(["gcc", "-std=c11", "-O1", "-fopenmp", *WARN, *args.cflags, "-DONNXC_MAIN_MODEL", os.path.join(d, name + ".c"),
                     main_o, "-lm", "-o", exe], f"{name}.c linked with that onnxc_main.o")
        if not ok:
            continue
        cmd = [exe, "--quiet", "--threads", "2", "--weights", os.path.join(d, name + ".weights")]
        for iname, a in feeds[name].items():
            np.save(os.path.join(work, f"{name}_{iname}.npy"), a)
            cmd += ["--input", f"{iname}={os.path.join(work, f'{name}_{iname}.npy')}"]
        cmd += ["--output", f"{refs[name][0][0]}={os.path.join(work, f'{name}.cli.out0.bin')}"]
        run(cmd, f"{name}_cli runs ({MODELS[name][0]})")
        compare_files(work, name, refs[name][:1], "cli.out")


# ---------------------------------------------------------------- python


def expect_raises(what, exc, needles, fn):
    try:
        fn()
    except exc as e:
        msg = str(e)
        missing = [n for n in needles if n not in msg]
        return report(not missing, f"{what}: {type(e).__name__}: {msg}", f"message lacks {missing}")
    except Exception as e:  # the wrong kind of exception
        return report(False, what, f"raised {type(e).__name__}: {e}, expected {exc.__name__}")
    return report(False, what, f"no exception, expected {exc.__name__}")


def test_python(args):
    work = args.work
    feeds, refs, mods = {}, {}, {}
    for name in MODELS:
        feeds[name], refs[name] = prepare(name, args.cases, work)
        if not compile_model(args, name, work, "python", " ".join(["-O1", "-Werror"] + args.cflags)):
            return
        sys.path.insert(0, os.path.join(work, name))
    for name in MODELS:  # all six wrappers, and their libraries, in this one process
        mods[name] = __import__(name)
        report(os.path.dirname(mods[name].__file__) == os.path.join(work, name), f"import {name} from {mods[name].__file__}")

    def outputs(name, got):
        got = got if isinstance(got, tuple) else (got,)
        report(len(got) == len(refs[name]), f"{name}.run returns {len(refs[name])} output(s)")
        for k, ((oname, ref), g) in enumerate(zip(refs[name], got)):
            compare(f"python {name} output '{oname}'", g, ref)

    models = {}
    for name, mod in mods.items():
        models[name] = mod.Model()
        outputs(name, models[name].run(*feeds[name].values()))
    outputs("gather", models["gather"].run(indices=feeds["gather"]["indices"], data=feeds["gather"]["data"]))
    conv, x = models["conv"], feeds["conv"]["x"]
    with mods["gemm"].Model(os.path.join(work, "gemm", "gemm.weights"), num_threads=1) as g:
        outputs("gemm", g.run(a=feeds["gemm"]["a"]))
    expect_raises("run after the with-block", ValueError, ["closed gemm.Model"], lambda: g.run(feeds["gemm"]["a"]))

    # wrong input
    expect_raises("wrong shape", ValueError, ["input 'x'", "(1, 1, 7, 5)", "(1, 7, 5)"], lambda: conv.run(x[0]))
    expect_raises("wrong dtype", TypeError, ["input 'x'", "float32", "float64"], lambda: conv.run(x.astype(np.float64)))
    expect_raises("wrong dtype (int64 input given int32)", TypeError, ["input 'indices'", "int64", "int32"],
                  lambda: models["gather"].run(feeds["gather"]["data"], feeds["gather"]["indices"].astype(np.int32)))
    expect_raises("a list, not an array", TypeError, ["input 'x'", "list"], lambda: conv.run(x.tolist()))
    expect_raises("too many inputs", TypeError, ["takes 1 input", "got 2"], lambda: conv.run(x, x))
    expect_raises("no input", TypeError, ["missing input 'x'"], lambda: conv.run())
    expect_raises("missing one of two inputs", TypeError, ["missing input 'indices'"],
                  lambda: models["gather"].run(feeds["gather"]["data"]))
    expect_raises("unknown input name", TypeError, ["unknown input 'X'", "'x'"], lambda: conv.run(X=x))
    expect_raises("an input twice", TypeError, ["input 'x' twice"], lambda: conv.run(x, x=x))
    expect_raises("bad num_threads", ValueError, ["num_threads", "-1"], lambda: mods["conv"].Model(num_threads=-1))
    outputs("conv", conv.run(np.asfortranarray(x)))  # not C-contiguous: copied, same result

    # bad weights: the C library's status and detail
    Error = mods["conv"].Error
    expect_raises("missing weights file", Error, ["conv_create", "nope.weights", "I/O error"],
                  lambda: mods["conv"].Model(os.path.join(work, "nope.weights")))
    expect_raises("weights of another model", Error, ["conv_create", "gemm.weights", "another model", "size mismatch"],
                  lambda: mods["conv"].Model(os.path.join(work, "gemm", "gemm.weights")))

    # sharing, closing, threads
    twin = conv.share()
    conv.close()
    conv.close()  # idempotent
    expect_raises("run on a closed model", ValueError, ["closed conv.Model"], lambda: conv.run(x))
    outputs("conv", twin.run(x))  # the shared weights outlive the instance they came from
    got, errors = {}, []

    def worker(k, m):
        try:
            for _ in range(20):
                got[k] = m.run(x)
        except Exception as e:  # reported below
            errors.append(repr(e))
        finally:
            m.close()

    ts = [threading.Thread(target=worker, args=(k, twin.share(num_threads=1))) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    report(not errors and len(got) == 4, "4 Python threads with instances sharing the weights, 20 runs each", "; ".join(errors))
    for k in sorted(got):
        compare(f"python thread {k}'s conv output", got[k], refs["conv"][0][1])
    twin.close()
    for m in models.values():
        m.close()


# ---------------------------------------------------------------- bad


def test_bad(args):
    work = args.work
    cflags = ["-O1", "-g", "-fopenmp", "-pthread", *WARN, *args.cflags]
    for name in ("conv", "gemm"):
        prepare(name, args.cases, work)
        if not compile_model(args, name, work, "c", ""):
            return
    # the same model with other weights values: same size, another checksum
    m = onnx.load(os.path.join(work, "conv.onnx"))
    w = m.graph.initializer[0]
    w.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(w) + np.float32(1), w.name))
    other = os.path.join(work, "other_build")
    os.makedirs(other, exist_ok=True)
    onnx.save(m, os.path.join(other, "conv.onnx"))
    ok, _ = run([args.compiler, os.path.join(other, "conv.onnx"), "-o", other, "--name", "conv", "--emit", "c", "--quiet"],
                "compile conv with other weights", quiet_ok=True)
    good = open(os.path.join(work, "conv", "conv.weights"), "rb").read()
    files = {
        "other_model.weights": open(os.path.join(work, "gemm", "gemm.weights"), "rb").read(),
        "other_build.weights": open(os.path.join(other, "conv.weights"), "rb").read(),
        "version2.weights": good[:8] + (2).to_bytes(4, "little") + good[12:],
        "truncated.weights": good[:-1],
        "header_only.weights": good[:40],
    }
    report(len(files["other_build.weights"]) == len(good), "other_build.weights has the size of conv.weights")
    for f, data in files.items():
        with open(os.path.join(work, f), "wb") as out:
            out.write(data)
    exe = os.path.join(work, "api_bad")
    ok, _ = run([args.cc, "-std=c11", *cflags, f"-I{os.path.join(work, 'conv')}", f"-I{HERE}", os.path.join(HERE, "api_bad.c"),
                 os.path.join(work, "conv", "conv.c"), "-lm", "-o", exe], f"build api_bad ({' '.join(cflags)})")
    if ok:
        ok, out = run([exe, work], "api_bad")
        print("     " + "\n     ".join(out.strip().splitlines()))


# ---------------------------------------------------------------- the CPU check


def test_cpu(args):
    """The conv model built with -mavx512er: AVX-512ER is the Xeon Phi's alone, so here the CPU
    check must refuse it through the C API (api_cpu.c), the Python wrapper and the executable;
    the unsafe skip is exercised where the CPU has AVX-512F (which -mavx512er implies)."""
    work = args.work
    feeds, refs = prepare("conv", args.cases, work)
    flags = ["-O1", "-mavx512er", *WARN]
    with open("/proc/cpuinfo") as f:
        cpu = f.read()
    has_avx512f = re.search(r"^flags\s*:.*\bavx512f\b", cpu, re.M) is not None
    if re.search(r"^flags\s*:.*\bavx512er\b", cpu, re.M):
        print("SKIPPED cpu: this CPU has AVX-512ER (a Xeon Phi): nothing here would be refused")
        return
    # The wrapper's library is built without --cflags: a sanitized one cannot load into this
    # (unsanitized) Python. The C program and the executable take them.
    if not compile_model(args, "conv", work, "python", " ".join(flags)):
        return
    # C API
    exe = os.path.join(work, "api_cpu")
    ok, _ = run([args.cc, "-std=c11", *flags, "-fopenmp", *args.cflags, f"-I{os.path.join(work, 'conv')}", f"-I{HERE}",
                 os.path.join(HERE, "api_cpu.c"), os.path.join(work, "conv", "conv.c"), "-lm", "-o", exe], "build api_cpu")
    if ok:
        ok, out = run([exe, work] + (["skip"] if has_avx512f else []), "api_cpu: the C API refuses this CPU")
        print("     " + "\n     ".join(out.strip().splitlines()))
    # Python wrapper
    sys.path.insert(0, os.path.join(work, "conv"))
    mod = __import__("conv")
    expect_raises("Model() on a CPU without AVX-512ER", mod.Error,
                  ["conv_create", "conv: built for host", "this CPU lacks ", "AVX-512ER", "CPU not supported by this build"],
                  lambda: mod.Model())
    try:
        mod.Model()
    except mod.Error as e:
        report(e.status == 13, f"Error.status is ONNXC_ERR_TARGET (13): {e.status}")
    if has_avx512f:
        with mod.Model(unsafe_skip_cpu_check=True) as m:
            compare("python conv with unsafe_skip_cpu_check=True", m.run(feeds["x"]), refs[0][1])
            with m.share() as twin:  # the skip carries over to a sharing instance
                compare("python conv, a sharing instance", twin.run(feeds["x"]), refs[0][1])
    else:
        print("SKIPPED Model(unsafe_skip_cpu_check=True): this CPU lacks AVX-512F, which the build may use")
    # the executable
    out = os.path.join(work, "conv_exe")
    ok, _ = run([args.compiler, os.path.join(work, "conv.onnx"), "-o", out, "--name", "conv", "--quiet",
                 "--cflags=" + " ".join(flags + args.cflags)], "compile-model conv --emit exe", quiet_ok=True)
    if ok:
        p = subprocess.run([os.path.join(out, "conv"), "--quiet"], capture_output=True, text=True, timeout=60)
        msg = p.stdout + p.stderr
        report(p.returncode == 1 and "CPU not supported by this build: conv: built for host" in msg and "lacks " in msg
               and "AVX-512ER" in msg,
               f"the executable refuses this CPU: exit {p.returncode}: {msg.strip()}")


# ---------------------------------------------------------------- threads


def test_threads(args):
    work = args.work
    name = "mobilenet_v2"
    t0 = time.monotonic()
    ok, _ = run([args.compiler, os.path.join(args.zoo, name + ".onnx"), "-o", os.path.join(work, name), "--name", name,
                 "--emit", "c", "--quiet"], f"compile-model {name} --emit c")
    if not ok:
        return
    for f in (f"{name}.input.npy", f"{name}.ref.npy"):
        shutil.copy(os.path.join(args.zoo, f), os.path.join(work, f))
    if args.sanitize == "thread":
        cc, flags = "clang-14", ["-O1", "-g", "-fsanitize=thread"]  # no OpenMP: libgomp is not TSan-instrumented
    elif args.sanitize == "address":
        # ASan alone: UBSan's checks in the kernels make the build 5x and the runs 3x slower, and
        # the sanitized suite runs every kernel under UBSan already.
        cc, flags = "clang-14", ["-O1", "-g", "-fopenmp", "-fsanitize=address", "-fno-omit-frame-pointer"]
    else:
        cc, flags = args.cc, ["-O3", "-march=native", "-fopenmp"]
    exe = os.path.join(work, "api_threads")
    ok, _ = run([cc, "-std=c11", *flags, *args.cflags, "-pthread", *WARN, f"-I{os.path.join(work, name)}", f"-I{HERE}",
                 os.path.join(HERE, "api_threads.c"), os.path.join(work, name, name + ".c"), "-lm", "-o", exe],
                f"build api_threads ({cc} {' '.join(flags)})")
    if not ok:
        return
    ok, out = run([exe, work, str(args.threads), str(args.runs)],
                  f"api_threads: {args.threads} threads x {args.runs} runs, own and shared weights", timeout=1800)
    print("     " + "\n     ".join(out.strip().splitlines()))
    print(f"threads test took {time.monotonic() - t0:.1f} s in all")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("test", choices=["link", "python", "bad", "threads", "cpu"])
    ap.add_argument("--compiler", required=True)
    ap.add_argument("--work", required=True, help="scratch folder (emptied first)")
    ap.add_argument("--cases", help="ONNX node test cases (…/node)")
    ap.add_argument("--zoo", help="zoo folder with mobilenet_v2.{onnx,input.npy,ref.npy}")
    ap.add_argument("--cc", default="gcc")
    ap.add_argument("--cflags", default="", help="more C flags for every build (e.g. sanitizers)")
    ap.add_argument("--sanitize", choices=["none", "address", "thread"], default="none")
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    args.cflags = shlex.split(args.cflags)
    if args.test == "bad" and args.sanitize == "address":
        args.cflags += ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined", "-fno-omit-frame-pointer"]
    need = "zoo" if args.test == "threads" else "cases"
    if not getattr(args, need):
        ap.error(f"{args.test} needs --{need}")
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    supp = os.path.join(args.work, "lsan.supp")
    with open(supp, "w") as f:
        f.write(LSAN_SUPPRESSIONS)
    os.environ["LSAN_OPTIONS"] = f"suppressions={supp}:print_suppressions=0"
    t0 = time.monotonic()
    try:
        {"link": test_link, "python": test_python, "bad": test_bad, "threads": test_threads, "cpu": test_cpu}[args.test](args)
    except Exception as e:  # a broken step is a failure, not a crash of the runner
        import traceback

        traceback.print_exc()
        report(False, f"runner error {e!r}")
    passed = sum(results)
    print(f"{args.test}: {passed} passed, {len(results) - passed} failed ({time.monotonic() - t0:.1f} s)")
    return 0 if results and passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
