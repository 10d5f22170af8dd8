#!/usr/bin/python3
"""Compare a model output against its reference: compare.py REF.npy OUT.npy [--tol 1e-3 | --step S [--steps K]].

Both files are loaded with numpy (no pickles) and compared as flat float64 arrays, so shapes may
differ as long as the element counts agree (1x1000 vs 1000 is fine). The error measure is the max
absolute error relative to the largest reference magnitude: pass iff
max|out - ref| <= tol * max|ref| and neither array holds NaN/inf. Exit codes: 0 pass, 1 mismatch
(too large an error, different element count, NaN/inf), 2 unusable input (missing, unreadable or
non-numeric file, bad arguments). Gap: one global tolerance; no per-element or top-k checks.
--step S compares a quantized model's output in quantization steps of S instead (the scale of
the DequantizeLinear that makes it): pass iff max|out - ref| <= K steps (--steps, default 1),
with a float32 rounding allowance; it also prints how many elements differ and by how many steps.
"""

import argparse
import sys

import numpy as np


def load(path, what):
    try:
        with open(path, "rb") as f:
            magic = f.read(6)
        if magic != b"\x93NUMPY":  # np.load would otherwise try it as a pickle
            fail(2, f"{what} file '{path}' is not a .npy file (no NumPy header)")
        a = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        fail(2, f"{what} file '{path}' does not exist")
    except (OSError, ValueError, EOFError) as e:
        fail(2, f"{what} file '{path}' is not a readable .npy array: {e}")
    if not (np.issubdtype(a.dtype, np.number) or a.dtype == np.bool_):
        fail(2, f"{what} file '{path}' holds dtype {a.dtype}, expected numbers")
    return a


def fail(code, msg):
    print(f"compare.py: {'FAIL' if code == 1 else 'ERROR'}: {msg}", file=sys.stderr)
    sys.exit(code)


def main():
    ap = argparse.ArgumentParser(description="Compare OUT.npy against REF.npy with a tolerance "
                                 "relative to max |ref|.")
    ap.add_argument("ref", metavar="REF.npy")
    ap.add_argument("out", metavar="OUT.npy")
    ap.add_argument("--tol", type=float, default=1e-3,
                    help="pass iff max abs error <= TOL * max|ref| (default 1e-3)")
    ap.add_argument("--step", type=float, metavar="S",
                    help="compare in quantization steps of S instead of --tol")
    ap.add_argument("--steps", type=float, default=1, metavar="K",
                    help="with --step: pass iff max abs error <= K steps (default 1)")
    args = ap.parse_args()  # argparse exits 2 on bad usage
    if not args.tol >= 0:
        fail(2, f"--tol must be a non-negative number, got {args.tol}")
    if args.step is not None and not (args.step > 0 and args.steps >= 0):
        fail(2, f"--step must be positive and --steps non-negative, got {args.step} and {args.steps}")

    ref = load(args.ref, "reference")
    out = load(args.out, "output")
    if ref.size != out.size:
        fail(1, f"element count differs: reference {ref.shape} has {ref.size}, "
                f"output {out.shape} has {out.size}")
    ref = ref.astype(np.float64).ravel()
    out = out.astype(np.float64).ravel()
    bad_ref = int(np.count_nonzero(~np.isfinite(ref)))
    bad_out = int(np.count_nonzero(~np.isfinite(out)))

    if ref.size == 0:
        abs_err, max_ref = 0.0, 0.0
    else:
        with np.errstate(invalid="ignore", over="ignore"):
            abs_err = float(np.max(np.abs(out - ref)))
            max_ref = float(np.max(np.abs(ref)))
    if args.step is not None:
        return compare_steps(ref, out, bad_ref, bad_out, args.step, args.steps)
    rel = abs_err / max_ref if max_ref > 0 else (0.0 if abs_err == 0 else float("inf"))
    print(f"max abs error {abs_err:.6g}, max |ref| {max_ref:.6g}, relative to max |ref| {rel:.6g} "
          f"({ref.size} elements, tol {args.tol:g})")

    if bad_ref or bad_out:
        fail(1, f"non-finite values: {bad_ref} in reference, {bad_out} in output")
    if not abs_err <= args.tol * max_ref:
        i = int(np.argmax(np.abs(out - ref)))
        fail(1, f"error {abs_err:.6g} exceeds tol {args.tol:g} * max|ref| = "
                f"{args.tol * max_ref:.6g} (worst at flat index {i}: ref {ref[i]:.6g}, "
                f"out {out[i]:.6g})")
    print("PASS")
    return 0


def compare_steps(ref, out, bad_ref, bad_out, step, steps):
    """Pass iff every |out - ref| is at most `steps` quantization steps of size `step`."""
    if bad_ref or bad_out:
        fail(1, f"non-finite values: {bad_ref} in reference, {bad_out} in output")
    d = np.abs(out - ref) / step if ref.size else np.zeros(0)
    # Both sides are float32 values (q - z) * step: a whole number of steps up to float32 rounding.
    k = np.rint(d)
    hist = {int(v): int(c) for v, c in zip(*np.unique(k, return_counts=True))}
    worst = float(d.max()) if d.size else 0.0
    print(f"max abs error {worst * step:.6g} = {worst:.4g} steps of {step:.6g}; elements by steps off: "
          f"{', '.join(f'{v}: {c}' for v, c in sorted(hist.items()))} ({ref.size} elements, "
          f"limit {steps:g} steps)")
    if not worst <= steps + 1e-3:
        i = int(np.argmax(d))
        fail(1, f"error of {worst:.4g} steps exceeds {steps:g} (worst at flat index {i}: ref {ref[i]:.6g}, "
                f"out {out[i]:.6g})")
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
