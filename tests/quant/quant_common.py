"""tests/quant/quant_common.py — what the quantized-model tests share.

vnni(): whether this CPU has AVX-512 VNNI or AVX-VNNI. Where it has neither, ONNX Runtime's
uint8 x int8 kernels (vpmaddubsw) saturate int16 pair sums, so its outputs are an exact
reference only for uint8 x uint8 products; the tests then give it the model's uint8 twin.
cpu_flags(): the CPU's /proc/cpuinfo flags (empty where unreadable).
script_args(): the scripts' common command line (--compiler, --work, --cflags, and --filter for
the kernel scripts), with ONNX Runtime's and its quantizer's logging quietened and the work folder
made.
"""
import argparse
import logging
import os


def cpu_flags():
    try:
        return open("/proc/cpuinfo").read().split()
    except OSError:
        return []


def vnni():
    flags = cpu_flags()
    return "avx512_vnni" in flags or "avx_vnni" in flags


def script_args(with_filter=False):
    ap = argparse.ArgumentParser()
    ap.add_argument("--compiler", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--cflags", default="")
    if with_filter:
        ap.add_argument("--filter", default="", help="only the cases whose name contains this")
    args = ap.parse_args()
    logging.getLogger().setLevel(logging.ERROR)  # the quantizer's advice to pre-process
    import onnxruntime as ort
    ort.set_default_logger_severity(3)
    os.makedirs(args.work, exist_ok=True)
    return args
