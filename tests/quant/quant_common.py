"""tests/quant/quant_common.py — what the quantized-model tests share.

vnni(): whether this CPU has AVX-512 VNNI or AVX-VNNI. Where it has neither, ONNX Runtime's
uint8 x int8 kernels (vpmaddubsw) saturate int16 pair sums, so its outputs are an exact
reference only for uint8 x uint8 products; the tests then give it the model's uint8 twin.
"""


def vnni():
    try:
        flags = open("/proc/cpuinfo").read().split()
    except OSError:
        return False
    return "avx512_vnni" in flags or "avx_vnni" in flags
