#!/usr/bin/env python3
"""Rewrites a GGUF model with its 2-D weight matrices quantized to Q8_0, Q4_0 or Q4_K, for
quantization studies with `attn-viz compare`. Q8_0 and Q4_0 blocks are those ggml's
quantize_row_q8_0_ref / quantize_row_q4_0_ref write; Q4_K blocks have ggml's layout (f16 d and
dmin, twelve bytes of 6-bit scales and mins for eight sub-blocks of 32, 128 bytes of nibbles) with
each sub-block's scale and min taken from its range (ggml's reference searches for slightly better
ones, so its error is a little lower). Metadata is copied byte for byte; tensors whose rows are not
whole blocks (32 values; 256 for Q4_K), 1-D tensors (norms) and the token embeddings stay as they
are, as llama.cpp's quantize leaves them. Only F32 source tensors are quantized.

Usage: quantize_gguf.py IN.gguf OUT.gguf --type Q8_0|Q4_0|Q4_K

A model as narrow as stories260K (rows of 64) has no row Q4_K can hold, so Q4_0 is its 4-bit form;
make_synthetic_gguf.py --type F32 --dim 256 --ffn 512 writes one whose matrices all take Q4_K.
"""
import argparse
import struct
import sys

import numpy as np

GGML_F32, GGML_Q4_0, GGML_Q8_0, GGML_Q4_K = 0, 2, 8, 12
SCALAR_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
BLOCK = 32
SUPER_BLOCK = 256  # the K-quants' block of 8 sub-blocks of BLOCK values


class Reader:
    def __init__(self, data):
        self.data, self.at = data, 0

    def take(self, fmt):
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values[0] if len(values) == 1 else values

    def skip_string(self):
        length = self.take("Q")  # read first: `self.at += self.take(...)` would add to the old position
        self.at += length

    def skip_value(self, kind):
        if kind == 8:
            self.skip_string()
        elif kind == 9:
            item, count = self.take("I"), self.take("Q")
            for _ in range(count):
                self.skip_value(item)
        else:
            self.at += SCALAR_SIZES[kind]


def quantize_q8_0(rows):
    blocks = rows.reshape(-1, BLOCK).astype(np.float32)
    d = np.abs(blocks).max(axis=1) / 127.0
    inverse = np.divide(1.0, d, out=np.zeros_like(d), where=d != 0)
    q = np.round(blocks * inverse[:, None]).astype(np.int8)
    out = np.empty(len(blocks), dtype=[("d", "<f2"), ("q", "i1", BLOCK)])
    out["d"], out["q"] = d.astype(np.float16), q
    return out.tobytes()


def quantize_q4_0(rows):
    blocks = rows.reshape(-1, BLOCK).astype(np.float32)
    largest = blocks[np.arange(len(blocks)), np.abs(blocks).argmax(axis=1)]  # signed value of largest magnitude
    d = largest / -8.0
    inverse = np.divide(1.0, d, out=np.zeros_like(d), where=d != 0)
    q = np.minimum(15, (blocks * inverse[:, None] + 8.5).astype(np.int8)).astype(np.uint8)
    out = np.empty(len(blocks), dtype=[("d", "<f2"), ("qs", "u1", BLOCK // 2)])
    out["d"], out["qs"] = d.astype(np.float16), q[:, : BLOCK // 2] | (q[:, BLOCK // 2 :] << 4)
    return out.tobytes()


def quantize_q4_k(rows):
    # Each sub-block: x ~ scale * q - low with q in 0..15 over [min(x, 0), max(x)]; then the eight
    # scales and lows as 6-bit multiples of the super-block's d and dmin, and q again with those.
    values = rows.reshape(-1, SUPER_BLOCK // BLOCK, BLOCK).astype(np.float32)
    low = -np.minimum(values.min(axis=2), 0.0)
    scale = (values.max(axis=2) + low) / 15.0
    d = (scale.max(axis=1) / 63.0).astype(np.float16).astype(np.float32)
    dmin = (low.max(axis=1) / 63.0).astype(np.float16).astype(np.float32)
    safe = lambda x: np.where(x != 0, x, 1.0)
    scale_q = np.clip(np.round(scale / safe(d)[:, None]), 0, 63).astype(np.uint8)
    low_q = np.clip(np.round(low / safe(dmin)[:, None]), 0, 63).astype(np.uint8)
    step = d[:, None] * scale_q
    shift = dmin[:, None] * low_q
    q = np.clip(np.round((values + shift[:, :, None]) / safe(step)[:, :, None]), 0, 15).astype(np.uint8)
    q[step == 0] = 0
    # Scale bytes as ggml's get_scale_min_k4 reads them: sub-blocks 0-3 in the low 6 bits of bytes
    # 0-3 (scales) and 4-7 (mins); sub-blocks 4-7 in the nibbles of bytes 8-11 and the top 2 bits
    # of bytes 0-7.
    packed = np.empty((len(values), 12), dtype=np.uint8)
    packed[:, 0:4] = scale_q[:, 0:4] | ((scale_q[:, 4:8] >> 4) << 6)
    packed[:, 4:8] = low_q[:, 0:4] | ((low_q[:, 4:8] >> 4) << 6)
    packed[:, 8:12] = (scale_q[:, 4:8] & 0x0F) | ((low_q[:, 4:8] & 0x0F) << 4)
    # Nibbles: each 64 values as 32 bytes, sub-block 2c in the low nibbles, 2c + 1 in the high.
    pairs = q.reshape(len(values), 4, 2, BLOCK)
    nibbles = (pairs[:, :, 0, :] | (pairs[:, :, 1, :] << 4)).reshape(len(values), SUPER_BLOCK // 2)
    out = np.empty(len(values), dtype=[("d", "<f2"), ("dmin", "<f2"), ("scales", "u1", 12), ("qs", "u1", SUPER_BLOCK // 2)])
    out["d"], out["dmin"], out["scales"], out["qs"] = d.astype(np.float16), dmin.astype(np.float16), packed, nibbles
    return out.tobytes()


# --type: (quantizer, ggml type id, values per block)
QUANTIZERS = {"Q8_0": (quantize_q8_0, GGML_Q8_0, BLOCK), "Q4_0": (quantize_q4_0, GGML_Q4_0, BLOCK),
              "Q4_K": (quantize_q4_k, GGML_Q4_K, SUPER_BLOCK)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source")
    parser.add_argument("target")
    parser.add_argument("--type", choices=sorted(QUANTIZERS), required=True)
    args = parser.parse_args()
    data = open(args.source, "rb").read()
    r = Reader(data)
    magic, version = r.take("4s"), r.take("I")
    if magic != b"GGUF" or version not in (2, 3):
        sys.exit(f"{args.source}: not a GGUF v2/v3 file")
    n_tensors, n_kv = r.take("Q"), r.take("Q")
    alignment = 32
    for _ in range(n_kv):
        key_at = r.at
        key = data[key_at + 8 : key_at + 8 + struct.unpack_from("<Q", data, key_at)[0]].decode()
        r.skip_string()
        kind = r.take("I")
        if key == "general.alignment":
            alignment = struct.unpack_from("<I", data, r.at)[0]
        r.skip_value(kind)
    metadata = data[:r.at]
    tensors = []
    for _ in range(n_tensors):
        name_at = r.at
        r.skip_string()
        name = data[name_at + 8 : r.at].decode()
        n_dims = r.take("I")
        dims = [r.take("Q") for _ in range(n_dims)]
        tensors.append((name, dims, r.take("I"), r.take("Q")))
    data_start = (r.at + alignment - 1) // alignment * alignment
    quantize, new_type, block = QUANTIZERS[args.type]
    infos, blobs, offset = b"", [], 0
    for i, (name, dims, kind, at) in enumerate(tensors):
        end = tensors[i + 1][3] if i + 1 < len(tensors) else len(data) - data_start
        blob = data[data_start + at : data_start + end]
        count = int(np.prod(dims))
        if kind == GGML_F32 and len(dims) == 2 and dims[0] % block == 0 and name != "token_embd.weight":
            blob, kind = quantize(np.frombuffer(blob[: 4 * count], dtype="<f4")), new_type
        padding = (-offset) % alignment
        blobs.append(b"\0" * padding + blob)
        offset += padding
        infos += struct.pack("<Q", len(name)) + name.encode() + struct.pack("<I", len(dims))
        infos += b"".join(struct.pack("<Q", d) for d in dims) + struct.pack("<IQ", kind, offset)
        offset += len(blob)
    header = metadata + infos
    header += b"\0" * ((-len(header)) % alignment)
    with open(args.target, "wb") as out:
        out.write(header)
        for blob in blobs:
            out.write(blob)


if __name__ == "__main__":
    main()
