#!/usr/bin/env bash
# A batch given at run time (compile-model --dynamic): ZOO/NAME.onnx, a model exported with a
# symbolic first dimension 'batch' and an input of N items (models/export_zoo.py --batch N
# --dynamic-batch), is compiled once with --dynamic batch=MAX, as an executable and as a Python
# module. At batches 1, 3 and N (the input's first items) both must give
#   - PyTorch's output for those items (models/compare.py, tolerance 1e-3), and
#   - bit for bit the output of the model compiled for that batch alone (--input-shape), whose
#     per-item arithmetic is the same (sanitized builds, whose flags hold -fsanitize=address: at
#     batch 3 only, a sanitized mobilenet_v2 build taking ~35 s of a core; the normal build
#     compares all three);
# and sizes out of range must fail with a clear message and no crash: through the executable
# (MAX+1 items, another item shape, input files disagreeing with --batch, a raw file that is not
# a whole number of items), the Python wrapper (ValueError) and the C API (NAME_run_batch outside
# 1..MAX: ONNXC_ERR_ARG; NAME_run_v with sizes that are not one batch: ONNXC_ERR_SIZE). Last, a
# two-input model (a + b, written here) refuses inputs of different batches, executable and Python.
# Usage: run_dynamic_batch.sh COMPILE_MODEL ZOO_DIR NAME WORK_DIR MAX [COMPILE_MODEL_FLAGS...]
set -euo pipefail
cc_model=$1 zoo=$2 name=$3 work=$4 max=$5
shift 5
here=$(cd "$(dirname "$0")" && pwd)
py=${ONNXC_PYTHON:-/usr/bin/python3}
rm -rf "$work"
mkdir -p "$work"
fail() { echo "dynamic batch $name: $*" >&2; exit 1; }

"$cc_model" "$zoo/$name.onnx" -o "$work/exe" --name "$name" --dynamic "batch=$max" "$@" | tee "$work/compile.log"
grep -q "a batch of 1 to $max items given at run time" "$work/compile.log" || fail "the compile log does not describe the run-time batch"
"$cc_model" "$zoo/$name.onnx" -o "$work/py" --name "$name" --dynamic "batch=$max" --emit python -q "$@"
sanitized=0
case "$*" in *-fsanitize=address*) sanitized=1 ;; esac
items=$("$py" -c "import numpy as np, sys; print(np.load(sys.argv[1]).shape[0])" "$zoo/$name.input.npy")

for b in 1 3 "$items"; do
  "$py" -c "import numpy as np, sys; np.save(sys.argv[2], np.load(sys.argv[1])[:int(sys.argv[3])])" \
    "$zoo/$name.input.npy" "$work/in_$b.npy" "$b"
  "$py" -c "import numpy as np, sys; np.save(sys.argv[2], np.load(sys.argv[1])[:int(sys.argv[3])])" \
    "$zoo/$name.ref.npy" "$work/ref_$b.npy" "$b"
  if [ "$sanitized" = 0 ] || [ "$b" = 3 ]; then
    "$cc_model" "$zoo/$name.onnx" -o "$work/static_$b" --name "$name" --input-shape "input=$b,3,224,224" -q "$@"
    "$work/static_$b/$name" --input "$work/in_$b.npy" --output "output=$work/static_$b.npy" --quiet
  fi
  "$work/exe/$name" --input "$work/in_$b.npy" --output "output=$work/dyn_$b.npy" | tee "$work/run_$b.log"
  grep -q "batch: $b of 1 to $max items" "$work/run_$b.log" || fail "the executable does not report a batch of $b"
  "$py" "$here/../../models/compare.py" "$work/ref_$b.npy" "$work/dyn_$b.npy" --tol 1e-3
  if [ -f "$work/static_$b.npy" ]; then
    cmp "$work/static_$b.npy" "$work/dyn_$b.npy" || fail "batch $b: not the output of the model compiled for batch $b"
  fi
done
# The largest batch, and one the executable makes up (--batch, random inputs): no failure.
"$work/exe/$name" --quiet --batch "$max"

# The Python wrapper: the same outputs, its errors, and the C API's through its library (built
# with ASan+UBSan when the flags say so: the sanitizers' runtimes are then preloaded).
preload=()
if [ "$sanitized" = 1 ]; then
  preload=(env "LD_PRELOAD=$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)" ASAN_OPTIONS=detect_leaks=0)
fi
"${preload[@]}" "$py" - "$work" "$name" "$max" "$items" <<'EOF'
import ctypes, os, sys
import numpy as np
work, name, max_batch, items = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
sys.path.insert(0, os.path.join(work, "py"))
mod = __import__(name)
assert mod.MAX_BATCH == max_batch, mod.MAX_BATCH
x = np.load(os.path.join(work, f"in_{items}.npy"))
with mod.Model() as m:
    for b in (1, 3, items):
        y = m.run(x[:b])
        want = np.load(os.path.join(work, f"dyn_{b}.npy"))
        assert y.shape == want.shape and np.array_equal(y, want), f"python, batch {b}: not the executable's output"
    item = x.shape[1:]
    for bad, words in ((np.zeros((max_batch + 1,) + item, np.float32), f"1 to {max_batch} items"),
                       (np.zeros((2,) + item[:-1] + (item[-1] + 1,), np.float32), "with a batch b"),
                       (np.zeros((0,) + item, np.float32), "with a batch b")):
        try:
            m.run(bad)
        except ValueError as e:
            assert words in str(e), e
        else:
            raise AssertionError(f"python: run() took shape {bad.shape}")
    assert np.array_equal(m.run(x[:1]), np.load(os.path.join(work, "dyn_1.npy"))), "python: a failed run broke the instance"

    # The C API of the same library, on the wrapper's instance.
    lib, ctx = m._lib, m._ctx
    out = np.empty((max_batch,) + mod.OUTPUTS[0][2][1:], np.float32)
    xin = np.zeros((max_batch,) + item, np.float32)
    run_batch = getattr(lib, f"{name}_run_batch")
    run_batch.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p]
    last_error = getattr(lib, f"{name}_last_error")
    last_error.restype = ctypes.c_char_p
    for b in (0, -1, max_batch + 1):
        rc = run_batch(ctx, b, xin.ctypes.data, out.ctypes.data)
        assert rc == 7, f"run_batch({b}): status {rc}, expected ONNXC_ERR_ARG"
        assert b"outside 1.." in last_error(), last_error()
    assert run_batch(ctx, 2, xin.ctypes.data, out.ctypes.data) == 0
    run_v = getattr(lib, f"{name}_run_v")
    P, S = ctypes.c_void_p, ctypes.c_size_t
    item_in, item_out = xin[0].nbytes, out[0].nbytes
    for ib, ob, what in ((item_in * 2 + 4, item_out * 2, "not a whole number of items"),
                         (item_in * 3, item_out * 2, "the batch is"),
                         (item_in * (max_batch + 1), item_out * (max_batch + 1), f"1 to {max_batch} items"),
                         (0, 0, "items")):
        rc = run_v(ctx, (P * 1)(xin.ctypes.data), (S * 1)(ib), (P * 1)(out.ctypes.data), (S * 1)(ob))
        assert rc == 4, f"run_v({ib}, {ob}) [{what}]: status {rc}, expected ONNXC_ERR_SIZE"
    assert run_v(ctx, (P * 1)(xin.ctypes.data), (S * 1)(item_in * 2), (P * 1)(out.ctypes.data), (S * 1)(item_out * 2)) == 0
print(f"python and C API: batches 1, 3 and {items} as the executable; bad batches refused")
EOF

# The executable's refusals: a clear message, a non-zero exit, nothing else.
expect_fail() {  # WORDS ARGS...: the run must fail saying WORDS
  local words=$1
  shift
  if "$work/exe/$name" --quiet "$@" > "$work/bad.log" 2>&1; then fail "the executable took $*"; fi
  grep -q -- "$words" "$work/bad.log" || { cat "$work/bad.log" >&2; fail "no '$words' for $*"; }
}
"$py" -c "import numpy as np, sys; x = np.load(sys.argv[1]); np.save(sys.argv[2], np.zeros((int(sys.argv[3]) + 1,) + x.shape[1:], x.dtype)); \
np.save(sys.argv[4], np.zeros((2,) + x.shape[1:-1] + (x.shape[-1] + 1,), x.dtype)); x[:2].tofile(sys.argv[5]); x[:2].tofile(sys.argv[6] + '.tmp'); \
open(sys.argv[6], 'wb').write(open(sys.argv[6] + '.tmp', 'rb').read()[:-4])" \
  "$work/in_3.npy" "$work/too_many.npy" "$max" "$work/other_item.npy" "$work/two.raw" "$work/short.raw"
expect_fail "expected 1 to $max items" --input "$work/too_many.npy"
expect_fail "expected 1 to $max items" --input "$work/other_item.npy"
expect_fail "expected 1 to $max items" --input "$work/short.raw"
expect_fail "but input 'input' holds 3 items" --batch 2 --input "$work/in_3.npy"
expect_fail "--batch needs 1 to $max items" --batch $((max + 1))
"$work/exe/$name" --quiet --input "$work/two.raw" --output "output=$work/two.npy"
"$py" -c "import numpy as np, sys; assert np.load(sys.argv[1]).shape[0] == 2" "$work/two.npy"

# Two inputs of one batch (a + b, [batch, 5]): inputs of different batches are refused by the
# executable and the wrapper; the sum is numpy's.
"$py" - "$work" <<'EOF'
import os, sys
import numpy as np
from onnx import TensorProto, helper, save
work = sys.argv[1]
vi = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, ["batch", 5])  # noqa: E731
g = helper.make_graph([helper.make_node("Add", ["a", "b"], ["y"], name="add_ab")], "two", [vi("a"), vi("b")], [vi("y")])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), os.path.join(work, "two.onnx"))
np.save(os.path.join(work, "a3.npy"), np.arange(15, dtype=np.float32).reshape(3, 5))
np.save(os.path.join(work, "b3.npy"), np.full((3, 5), 0.5, np.float32))
np.save(os.path.join(work, "b2.npy"), np.ones((2, 5), np.float32))
EOF
"$cc_model" "$work/two.onnx" -o "$work/two" --dynamic batch=4 --emit python -q "$@"
"$cc_model" "$work/two.onnx" -o "$work/two" --dynamic batch=4 -q "$@"
"$work/two/two" --quiet --input "a=$work/a3.npy" --input "b=$work/b3.npy" --output "y=$work/y3.npy"
if "$work/two/two" --quiet --input "a=$work/a3.npy" --input "b=$work/b2.npy" > "$work/bad.log" 2>&1; then fail "two inputs of 3 and 2 items ran"; fi
grep -q "input 'b' holds 2 items but input 'a' 3" "$work/bad.log" || { cat "$work/bad.log" >&2; fail "no message for inputs of different batches"; }
"${preload[@]}" "$py" - "$work" <<'EOF'
import os, sys
import numpy as np
work = sys.argv[1]
sys.path.insert(0, os.path.join(work, "two"))
import two
a, b = np.load(os.path.join(work, "a3.npy")), np.load(os.path.join(work, "b3.npy"))
assert np.array_equal(np.load(os.path.join(work, "y3.npy")), a + b), "executable: a + b"
with two.Model() as m:
    assert np.array_equal(m.run(a, b), a + b), "python: a + b"
    try:
        m.run(a, np.load(os.path.join(work, "b2.npy")))
    except ValueError as e:
        assert "input 'b' holds 2 items but input 'a' 3" in str(e), e
    else:
        raise AssertionError("python: inputs of 3 and 2 items ran")
EOF
static="the static builds' bit for bit"
[ "$sanitized" = 1 ] && static="at batch 3 the static build's bit for bit"
echo "dynamic batch $name: compiled once with --dynamic batch=$max; batches 1, 3 and $items give PyTorch's output and" \
  "$static; bad sizes refused"
