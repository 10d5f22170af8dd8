"""Writes ONNX's backend node test cases from the installed onnx package (requirements.txt pins
onnx 1.23.2) to OUTDIR/node/test_*/{model.onnx, test_data_set_0/{input,output}_K.pb}, the layout
run_node_tests.py reads (and the one onnx's own data/node folder has).

  generate.py OUTDIR

The cases, and the expected outputs in them, are onnx's own: each is defined in
onnx/backend/test/case/node/*.py with its reference computed there by numpy (or by onnx's
reference evaluator); collect_testcases() runs those definitions. onnx 1.23's wheel ships no
node data and its cmd_tools writes only the model cases, so the files are written here.
Idempotent: does nothing when OUTDIR/node already holds the cases of this onnx version
(OUTDIR/node/ONNX_VERSION names it); a folder from another version is replaced.
"""

import os
import shutil
import sys
import warnings


def write_value(path, value, type_proto, name):
    from onnx import TensorProto, numpy_helper

    if isinstance(value, TensorProto):
        proto = value
    elif type_proto.HasField("sequence_type"):
        proto = numpy_helper.from_list(value, name)
    elif type_proto.HasField("optional_type"):
        proto = numpy_helper.from_optional(value, name)
    elif type_proto.HasField("map_type"):
        proto = numpy_helper.from_dict(value, name)
    else:
        proto = numpy_helper.from_array(value, name)
    with open(path, "wb") as f:
        f.write(proto.SerializeToString())


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: generate.py OUTDIR")
    warnings.simplefilter("ignore")
    import onnx
    from onnx.backend.test.case import node

    out = os.path.join(sys.argv[1], "node")
    stamp = os.path.join(out, "ONNX_VERSION")
    if os.path.exists(stamp) and open(stamp).read().strip() == onnx.__version__:
        n = sum(1 for d in os.listdir(out) if d.startswith("test_"))
        print(f"generate.py: {out} already has the {n} cases of onnx {onnx.__version__}; skipping")
        return
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    cases = node.collect_testcases()
    for case in cases:
        d = os.path.join(out, case.name)
        os.makedirs(d)
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(case.model.SerializeToString())
        graph = case.model.graph
        for k, (inputs, outputs) in enumerate(case.data_sets):
            ds = os.path.join(d, f"test_data_set_{k}")
            os.makedirs(ds)
            for j, v in enumerate(inputs):
                write_value(os.path.join(ds, f"input_{j}.pb"), v, graph.input[j].type, graph.input[j].name)
            for j, v in enumerate(outputs):
                write_value(os.path.join(ds, f"output_{j}.pb"), v, graph.output[j].type, graph.output[j].name)
    with open(stamp, "w") as f:
        f.write(onnx.__version__ + "\n")
    print(f"generate.py: wrote {len(cases)} cases of onnx {onnx.__version__} to {out}")


if __name__ == "__main__":
    main()
