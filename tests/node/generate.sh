#!/bin/sh
# Generates ONNX's backend node test cases with Debian's python3-onnx (1.12):
#   tests/node/generate.sh OUTDIR   ->  OUTDIR/node/test_*/{model.onnx,test_data_set_*/}
# Idempotent: does nothing when OUTDIR/node already holds test_* cases.
# Uses /usr/bin/python3 (Debian's, which has onnx + numpy), not a python3 on PATH
# that may be a pyenv without packages. The np.float/... shim lets onnx 1.12's
# generators run under numpy >= 1.24. Override the interpreter with PYTHON=...
set -eu
if [ $# -ne 1 ]; then
    echo "usage: $0 OUTDIR" >&2
    exit 1
fi
out=$1
py=${PYTHON:-/usr/bin/python3}
if ls -d "$out"/node/test_* >/dev/null 2>&1; then
    n=$(ls -d "$out"/node/test_* | wc -l)
    echo "generate.sh: $out/node already has $n cases; skipping"
    exit 0
fi
mkdir -p "$out"
"$py" -c "
import sys, warnings
warnings.simplefilter('ignore')
import numpy as np
for _n, _t in (('float', float), ('int', int), ('bool', bool), ('object', object)):
    if not hasattr(np, _n):
        setattr(np, _n, _t)
from onnx.backend.test import cmd_tools
sys.argv = ['generate.sh', 'generate-data', '-o', sys.argv[1]]
cmd_tools.main()
" "$out"
n=$(ls -d "$out"/node/test_* | wc -l)
echo "generate.sh: wrote $n cases to $out/node"
