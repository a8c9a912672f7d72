#!/usr/bin/env python3
"""Writes the fuzz target's seed corpus (tests/fuzz/corpus/): well-formed messages of every kind and
shape, which the fuzzer mutates. Input layout: 8 bytes of receiver parameters, a 96-byte WireHeader
(transport/wire_format.h), then the payload. Run from anywhere; rewrites the corpus."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus")
MAGIC = 0x4D505831
CONTRIBUTION, RESULT, GOODBYE, ABORT, STALLED = 1, 2, 3, 4, 5
DENSE, PRESENCE = 1, 2


def receiver(count, block, elem_type=0, op=0, records=False, ranks=1, rewritten=False):
    c = count - 1
    b = block - 1
    return bytes([c & 0xFF, (c >> 8) & 0xFF, (c >> 16) & 0x3F, b & 0xFF, (b >> 8) & 3, elem_type, op,
                  (1 if records else 0) | ((ranks - 1) << 1) | (8 if rewritten else 0)])


def header(kind, count, block, begin, end, nblocks, flags=0, first=0, shard_lo=0, shard_hi=None, elem_type=0, op=0,
           ring_slot=0, ring_use=0):
    blocks = (count + block - 1) // block
    shard_hi = blocks if shard_hi is None else shard_hi
    return struct.pack("<IBBBBIIIIQQQQQQQQII", MAGIC, kind, flags, elem_type, op, 7, 1, block, 4, 0, count, shard_lo,
                       shard_hi, begin, end, first, nblocks, ring_slot, ring_use)


def floats(n, start=1.0):
    return struct.pack("<%df" % n, *[start + i for i in range(n)])


def seeds():
    count, block = 1000, 10  # 100 blocks of 40 bytes
    r = receiver(count, block)
    # Packed: blocks 3, 7, 50 of [0, 100), then their numbers.
    yield "packed", r + header(CONTRIBUTION, count, block, 0, 100, 3) + floats(30) + struct.pack("<3I", 3, 7, 50)
    # The same, rewritten by its sender after the check (block numbers 3, 7, 50 become ~3, ~7, ~50).
    yield "packed_rewritten", receiver(count, block, rewritten=True) + header(CONTRIBUTION, count, block, 0, 100, 3) + \
        floats(30) + struct.pack("<3I", 3, 7, 50)
    # Dense run [20, 24) of [10, 40).
    yield "dense", r + header(RESULT, count, block, 10, 40, 4, DENSE, 20) + floats(40)
    # ... from slot 3 of its aggregator's result ring, that slot's second use.
    yield "ring", r + header(RESULT, count, block, 10, 40, 4, DENSE, 20, ring_slot=3, ring_use=2) + floats(40)
    # Dense run [20, 26) with a presence bitmap (blocks 20, 21, 25).
    yield "presence", r + header(RESULT, count, block, 10, 40, 6, DENSE | PRESENCE, 20) + floats(60) + \
        struct.pack("<I", 0b100011)
    # ... rewritten by its sender after the check (every block of the run present).
    yield "presence_rewritten", receiver(count, block, rewritten=True) + \
        header(RESULT, count, block, 10, 40, 6, DENSE | PRESENCE, 20) + floats(60) + struct.pack("<I", 0b100011)
    # The vector's partial last block: count 995 -> block 99 holds 5 elements.
    r2 = receiver(995, block)
    yield "partial", r2 + header(RESULT, 995, block, 90, 100, 2) + floats(15) + struct.pack("<2I", 1, 9)
    # Element variant (block size 1), doubles.
    r3 = receiver(5000, 1, elem_type=1)
    yield "elements", r3 + header(CONTRIBUTION, 5000, 1, 0, 5000, 3, elem_type=1) + \
        struct.pack("<3d", 1.5, -0.0, 2.0) + struct.pack("<3I", 0, 17, 4999)
    # A shard that is not the whole vector.
    yield "shard", r + header(CONTRIBUTION, count, block, 50, 60, 1, shard_lo=50, shard_hi=100) + floats(10) + \
        struct.pack("<I", 5)
    # A message that covers a range and carries nothing.
    yield "empty", r + header(RESULT, count, block, 0, 100, 0)
    for name, kind in (("goodbye", GOODBYE), ("abort", ABORT), ("stalled", STALLED)):
        yield name, r + header(kind, count, block, 0, 0, 0)
    # Allgather records of 2 ranks: n, max_blocks numbers, max_blocks blocks (max_blocks = 1 + len % 7).
    def record(numbers, max_blocks):
        body = struct.pack("<Q", len(numbers)) + struct.pack("<%dQ" % max_blocks, *(numbers + [0] * (max_blocks - len(numbers))))
        return body + floats(max_blocks * block)
    max_blocks = 3
    rec = record([1, 5], max_blocks) + record([5, 9, 40], max_blocks)
    # Pad so that len(payload) % 7 == max_blocks - 1.
    while len(rec) % 7 != max_blocks - 1:
        rec += b"\0"
    yield "records", receiver(count, block, records=True, ranks=2) + header(CONTRIBUTION, count, block, 0, 0, 0) + rec


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, data in seeds():
        with open(os.path.join(OUT, "seed_" + name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
