#!/usr/bin/env python3
"""Rewrites a GGUF model with its 2-D weight matrices quantized to Q8_0 or Q4_0, for quantization
studies with `attn-viz compare` (the blocks as ggml's quantize_row_q8_0_ref / quantize_row_q4_0_ref
write them). Metadata is copied byte for byte; tensors whose rows are not whole 32-value blocks,
1-D tensors (norms) and the token embeddings stay as they are, as llama.cpp's quantize leaves them.
Only F32 source tensors are quantized.

Usage: quantize_gguf.py IN.gguf OUT.gguf --type Q8_0|Q4_0

Q4_K and the other K-quants need rows of 256 values: a model as narrow as stories260K (rows of 64)
has none, so Q4_0 is its 4-bit form.
"""
import argparse
import struct
import sys

import numpy as np

GGML_F32, GGML_Q4_0, GGML_Q8_0 = 0, 2, 8
SCALAR_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
BLOCK = 32


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source")
    parser.add_argument("target")
    parser.add_argument("--type", choices=["Q8_0", "Q4_0"], required=True)
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
    quantize, new_type = (quantize_q8_0, GGML_Q8_0) if args.type == "Q8_0" else (quantize_q4_0, GGML_Q4_0)
    infos, blobs, offset = b"", [], 0
    for i, (name, dims, kind, at) in enumerate(tensors):
        end = tensors[i + 1][3] if i + 1 < len(tensors) else len(data) - data_start
        blob = data[data_start + at : data_start + end]
        count = int(np.prod(dims))
        if kind == GGML_F32 and len(dims) == 2 and dims[0] % BLOCK == 0 and name != "token_embd.weight":
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
