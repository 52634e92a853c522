"""Compression bombs served over real HTTP on 127.0.0.1, and a way to measure what they cost.

A bomb here is a valid gzip or deflate body that inflates to 1 GiB (by default) of one byte
repeated, made on the fly so the server stays small: the deflate stream is cut with a full flush
every MiB, which resets the compressor's history, so every MiB compresses to the same ~1 KiB block
and the server only ever holds that block (RFC 1951 allows any number of blocks; the checksum in
the trailer is computed once per process). Its length is known ahead, so it can be served with a
``Content-Length``, as the servers that exposed the problem did.

:func:`peak_rss_growth` measures how far the test process's resident memory rose above where it
started while a block ran (Linux's ``VmHWM``, reset through ``/proc/self/clear_refs``).
"""

from __future__ import annotations

import functools
import re
import struct
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from .raw_http import Reply

__all__ = ["GIB", "Bomb", "bomb", "peak_rss_growth", "send_bomb"]

GIB = 1 << 30
_MIB = 1 << 20
#: Blocks per write: ~64 KiB on the wire at once, what a fast server's socket delivers.
_BLOCKS_PER_WRITE = 64


@dataclass(frozen=True)
class Bomb:
    coding: str  # "gzip" or "deflate" (the zlib format, RFC 1950)
    head: bytes  # the format's header and the deflated prefix
    block: bytes  # one MiB of filler, deflated and fully flushed
    blocks: int
    tail: bytes  # the deflated suffix, the final block and the format's trailer

    @property
    def length(self) -> int:
        return len(self.head) + len(self.block) * self.blocks + len(self.tail)

    @property
    def inflated(self) -> int:
        return self.blocks * _MIB

    def chunks(self) -> Iterator[bytes]:
        yield self.head
        left = self.blocks
        while left:
            n = min(left, _BLOCKS_PER_WRITE)
            yield self.block * n
            left -= n
        yield self.tail


@functools.cache
def bomb(
    coding: str, *, prefix: bytes = b"", suffix: bytes = b"", filler: bytes = b" ", size: int = GIB
) -> Bomb:
    """A ``coding`` body that inflates to ``prefix``, ``size`` bytes of ``filler``, ``suffix``."""
    assert size % _MIB == 0
    assert len(filler) == 1
    mib = filler * _MIB
    deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    head = deflate.compress(prefix) + deflate.flush(zlib.Z_FULL_FLUSH)
    block = deflate.compress(mib) + deflate.flush(zlib.Z_FULL_FLUSH)
    tail = deflate.compress(suffix) + deflate.flush()
    blocks = size // _MIB
    if coding == "gzip":
        check = zlib.crc32(prefix)
        for _ in range(blocks):
            check = zlib.crc32(mib, check)
        total = (len(prefix) + size + len(suffix)) & 0xFFFFFFFF
        return Bomb(
            coding,
            b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + head,
            block,
            blocks,
            tail + struct.pack("<II", zlib.crc32(suffix, check), total),
        )
    assert coding == "deflate"
    adler = zlib.adler32(prefix)
    for _ in range(blocks):
        adler = zlib.adler32(mib, adler)
    return Bomb(
        coding, b"\x78\xda" + head, block, blocks, tail + struct.pack(">I", zlib.adler32(suffix, adler))
    )


async def send_bomb(
    reply: Reply,
    status: int,
    body: Bomb,
    *,
    content_type: str,
    length: bool = True,
    headers: dict[str, str] | None = None,
) -> None:
    """Serve ``body`` with its ``Content-Encoding``, with a ``Content-Length`` or delimited by close."""
    extra = {"Content-Encoding": body.coding, **(headers or {})}
    if length:
        extra["Content-Length"] = str(body.length)
    await reply.start(status, content_type=content_type, headers=extra)
    for chunk in body.chunks():
        await reply.write(chunk)


def _status_kib(field: str) -> int:
    match = re.search(rf"^{field}:\s+(\d+) kB", Path("/proc/self/status").read_text(), re.M)
    assert match is not None
    return int(match.group(1))


@contextmanager
def peak_rss_growth() -> Iterator[list[int]]:
    """``with peak_rss_growth() as grew:`` then ``grew[0]``: the peak resident size reached inside
    the block, less the resident size at its start, in bytes."""
    clear = Path("/proc/self/clear_refs")
    if not clear.exists():
        pytest.skip("peak RSS is measured through Linux's /proc/self/clear_refs")
    try:
        clear.write_text("5")  # resets VmHWM (the peak) to the current resident size
    except OSError:
        pytest.skip("cannot reset the peak RSS here (/proc/self/clear_refs not writable)")
    before = _status_kib("VmRSS")
    grew = [0]
    yield grew
    grew[0] = (_status_kib("VmHWM") - before) * 1024
