"""Writes models and data for the storage-only element types (float8,
float4, int4 / int2) into OUTDIR, with expected outputs computed here,
independently of Kiln's lowering:

  roundtrip_<type>.onnx   x (every code of the type) -> Cast to float -> y,
                          y -> Cast back -> z; y_<type>.pb holds the values
                          decoded by the formula below, z_<type>.pb the codes
                          themselves (NaN codes as the type's NaN).
  sat.onnx / nosat.onnx   float -> float8e4m3fn, saturating or not, on
                          values whose encodings are written out by hand.
  i4.onnx                 float -> int4 and int4 -> float, packed .pb data.
  weights.onnx            int4 / uint4 initializers (raw and int32_data).

Debian's onnx (1.12) predates these types: they are written by number.
usage: low_precision.py OUTDIR
"""
import math
import os
import struct
import sys

import onnx
from onnx import helper

FORMATS = {
    # name: (ONNX data type, width, exponent bits, mantissa bits, bias, kind)
    "float8e4m3fn": (17, 8, 4, 3, 7, "fn"),
    "float8e4m3fnuz": (18, 8, 4, 3, 8, "fnuz"),
    "float8e5m2": (19, 8, 5, 2, 15, "ieee"),
    "float8e5m2fnuz": (20, 8, 5, 2, 16, "fnuz"),
    "float4e2m1": (23, 4, 2, 1, 1, "none"),
    "float8e8m0": (24, 8, 8, 0, 127, "e8m0"),
}


def decode(code, width, e_bits, m_bits, bias, kind):
    """The value of a code of the format (NaN as float('nan'))."""
    if kind == "e8m0":
        return float("nan") if code == 0xFF else math.ldexp(1.0, code - 127)
    sign = -1.0 if code >> (width - 1) else 1.0
    e = (code >> m_bits) & ((1 << e_bits) - 1)
    m = code & ((1 << m_bits) - 1)
    if kind == "fnuz" and code == 0x80:
        return float("nan")
    if kind == "fn" and (code & 0x7F) == 0x7F:
        return float("nan")
    if kind == "ieee" and e == (1 << e_bits) - 1:
        return sign * math.inf if m == 0 else float("nan")
    if e == 0:
        return sign * math.ldexp(m, 1 - bias - m_bits)
    return sign * math.ldexp(1 + m / (1 << m_bits), e - bias)


def tensor(name, data_type, dims, raw):
    t = onnx.TensorProto()
    t.name, t.data_type = name, data_type
    t.dims.extend(dims)
    t.raw_data = raw
    return t


def packed(codes, width):
    """ONNX's packing of 4-bit codes, two to a byte, the first low."""
    if width == 8:
        return bytes(codes)
    out = bytearray((len(codes) + 1) // 2)
    for i, c in enumerate(codes):
        out[i // 2] |= (c & 0xF) << (4 * (i % 2))
    return bytes(out)


def floats(values):
    return struct.pack(f"<{len(values)}f", *values)


def model(path, nodes, inputs, outputs, opset=24):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save(m, path)


def save(path, t):
    with open(path, "wb") as f:
        f.write(t.SerializeToString())


def main():
    out = sys.argv[1]
    for name, (dt, width, e_bits, m_bits, bias, kind) in FORMATS.items():
        codes = list(range(1 << width))
        values = [decode(c, width, e_bits, m_bits, bias, kind) for c in codes]
        n = len(codes)
        model(os.path.join(out, f"roundtrip_{name}.onnx"),
              [helper.make_node("Cast", ["x"], ["y"], to=1),
               helper.make_node("Cast", ["y"], ["z"], to=dt, saturate=0)],
              [helper.make_tensor_value_info("x", dt, [n])],
              [helper.make_tensor_value_info("y", 1, [n]),
               helper.make_tensor_value_info("z", dt, [n])])
        save(os.path.join(out, f"x_{name}.pb"), tensor("x", dt, [n], packed(codes, width)))
        save(os.path.join(out, f"y_{name}.pb"), tensor("y", 1, [n], floats(values)))
        # Decoding then encoding (not saturating: infinities stay) gives
        # every code back; the comparison is by value, so every NaN code
        # matches. float8e8m0's 2^-127 is a float32 subnormal with a
        # fraction, which ONNX's round_mode "up" takes to 2^-126.
        back = [1 if kind == "e8m0" and c == 0 else c for c in codes]
        save(os.path.join(out, f"z_{name}.pb"), tensor("z", dt, [n], packed(back, width)))

    # float -> float8e4m3fn: 0.47892547 -> 0.46875 (0x2F), 1e6 and +-inf
    # saturate to +-448 (0x7E / 0xFE) or become NaN (0x7F), NaN stays NaN,
    # 1e-7 -> 0, 464 (a tie between 448 and 480) -> 448, 0.0009765625
    # (2^-10, the smallest step 2^-9 halved: a tie) -> 0, 0.00146484375 (1.5
    # steps, a tie) -> 2 steps (0x02).
    x = [0.47892547, 1e6, math.inf, -math.inf, float("nan"), 1e-7, 464.0,
         2.0 ** -10, 1.5 * 2.0 ** -9]
    sat = [0x2F, 0x7E, 0x7E, 0xFE, 0x7F, 0x00, 0x7E, 0x00, 0x02]
    nosat = [0x2F, 0x7F, 0x7F, 0xFF, 0x7F, 0x00, 0x7E, 0x00, 0x02]
    n = len(x)
    save(os.path.join(out, "f32.pb"), tensor("x", 1, [n], floats(x)))
    for name, saturate, codes in (("sat", 1, sat), ("nosat", 0, nosat)):
        model(os.path.join(out, f"{name}.onnx"),
              [helper.make_node("Cast", ["x"], ["y"], to=17, saturate=saturate)],
              [helper.make_tensor_value_info("x", 1, [n])],
              [helper.make_tensor_value_info("y", 17, [n])])
        save(os.path.join(out, f"{name}.pb"), tensor("y", 17, [n], bytes(codes)))

    # float -> int4: out of [-8, 7] becomes 0 (ONNX's reference); 2.7
    # truncates to 2, -2.7 to -2.
    x = [-9.0, -8.0, -2.7, -1.0, 0.0, 2.7, 7.0, 8.0, 15.0]
    codes = [0, -8, -2, -1, 0, 2, 7, 0, 0]
    n = len(x)
    model(os.path.join(out, "i4.onnx"),
          [helper.make_node("Cast", ["x"], ["y"], to=22),
           helper.make_node("Cast", ["y"], ["z"], to=1)],
          [helper.make_tensor_value_info("x", 1, [n])],
          [helper.make_tensor_value_info("y", 22, [n]),
           helper.make_tensor_value_info("z", 1, [n])])
    save(os.path.join(out, "i4_x.pb"), tensor("x", 1, [n], floats(x)))
    save(os.path.join(out, "i4_y.pb"), tensor("y", 22, [n], packed([c & 0xF for c in codes], 4)))
    save(os.path.join(out, "i4_z.pb"), tensor("z", 1, [n], floats([float(c) for c in codes])))

    # Weights: an int4 initializer packed in raw data (an odd count, the
    # last byte half used) and a uint4 one packed in int32_data.
    w = tensor("w", 22, [5], bytes([0xF8, 0x30, 0x07]))  # -8, -1, 0, 3, 7
    u = onnx.TensorProto()
    u.name, u.data_type = "u", 21
    u.dims.extend([3])
    u.int32_data.extend([0xF1, 0x09])  # 1, 15, 9
    graph = helper.make_graph(
        [helper.make_node("Cast", ["w"], ["wf"], to=1),
         helper.make_node("Cast", ["u"], ["uf"], to=1)],
        "g", [], [helper.make_tensor_value_info("wf", 1, [5]),
                  helper.make_tensor_value_info("uf", 1, [3])],
        initializer=[w, u])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)])
    m.ir_version = 8
    onnx.save(m, os.path.join(out, "weights.onnx"))
    save(os.path.join(out, "weights_w.pb"), tensor("wf", 1, [5], floats([-8, -1, 0, 3, 7])))
    save(os.path.join(out, "weights_u.pb"), tensor("uf", 1, [3], floats([1, 15, 9])))

    # float32 and float64 to bfloat16, rounded to nearest even: ties both
    # ways, NaN, infinities, and a float64 just above a tie that rounding
    # through float32 first would get wrong. Computed here exactly.
    def bf16_of(v):
        if math.isnan(v):
            return 0x7FC0
        if math.isinf(v) or v == 0:
            return struct.unpack("<I", struct.pack("<f", v))[0] >> 16
        m, e = math.frexp(abs(v))  # |v| = m * 2^e, 0.5 <= m < 1
        q = round(m * 2 ** 8)  # 8 significant bits, ties to even
        r = math.ldexp(q, e - 8)
        if r >= 2.0 ** 128:
            r = math.inf
        return struct.unpack("<I", struct.pack("<f", math.copysign(r, v)))[0] >> 16

    f32_bits = [0x3F808000, 0x3F818000, 0x3F80FFFF, 0xBF808001, 0x7F7FFFFF, 0x00000000,
                0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x3EAAAAAB, 0x42F6E979]
    xs = [struct.unpack("<f", struct.pack("<I", b))[0] for b in f32_bits]
    ds = [1 + 2 ** -8 + 2 ** -30, 1 + 2 ** -8, -(3 + 2 ** -7 + 2 ** -40), 0.1, 1e38, -2.5e-30,
          math.inf, -math.inf, math.nan, 0.0, 65504.0, 1 / 3]
    n = len(xs)
    graph = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["y"], to=16), helper.make_node("Cast", ["d"], ["z"], to=16)],
        "g", [helper.make_tensor_value_info("x", 1, [n]), helper.make_tensor_value_info("d", 11, [n])],
        [helper.make_tensor_value_info("y", 16, [n]), helper.make_tensor_value_info("z", 16, [n])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, os.path.join(out, "bf16.onnx"))
    save(os.path.join(out, "bf16_x.pb"), tensor("x", 1, [n], floats(xs)))
    save(os.path.join(out, "bf16_d.pb"), tensor("d", 11, [n], struct.pack(f"<{n}d", *ds)))
    save(os.path.join(out, "bf16_y.pb"),
         tensor("y", 16, [n], struct.pack(f"<{n}H", *[bf16_of(v) for v in xs])))
    save(os.path.join(out, "bf16_z.pb"),
         tensor("z", 16, [n], struct.pack(f"<{n}H", *[bf16_of(v) for v in ds])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
