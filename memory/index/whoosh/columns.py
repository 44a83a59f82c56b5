"""Whoosh's variable-length columns (the stored fields) open without a Python loop per document.

A ``VarBytesColumn`` written without its offsets array (Whoosh's default for the stored fields)
derives each document's offset from the lengths array when a reader opens it, one
``array.append`` per document of the segment. At a million tokens that is about 24,000
documents a segment and 10 ms a segment, paid by every cold process that reads one stored
field (the freshness check, a search's hits). The offsets here are the same running sum,
computed by :func:`itertools.accumulate` in C; everything else is Whoosh's own code.
"""

from __future__ import annotations

import itertools
import struct
from array import array
from typing import Any

from whoosh import columns


def running_offsets(lengths: Any) -> array[int]:
    """The offset of each item given the lengths of all of them (the first at 0)."""
    offsets = array("L", itertools.accumulate(lengths, initial=0))
    offsets.pop()  # the end of the last item
    return offsets


def _read_offsets_and_lengths(self: Any) -> None:
    dbfile, basepos, length, doccount = self._dbfile, self._basepos, self._length, self._doccount
    lastbyte = basepos + length - 1
    lens_code = chr(dbfile.get_byte(lastbyte))
    offsets = None
    if lens_code == "X":  # the offsets were written: read them as Whoosh does
        self.had_stored_offsets = True
        lens_code = chr(dbfile.get_byte(lastbyte - 2))
        offsets_code = chr(dbfile.get_byte(lastbyte - 1))
        offsetstart = (lastbyte - 2) - doccount * struct.calcsize(offsets_code)
        offsets = dbfile.get_array(offsetstart, offsets_code, doccount)
        lastbyte = offsetstart
    lenstart = lastbyte - struct.calcsize(lens_code) * doccount
    lengths = dbfile.get_array(lenstart, lens_code, doccount)
    self._offsets = offsets if offsets is not None else running_offsets(lengths)
    self._lengths = lengths


def install() -> None:
    """Replace the per-document loop of ``VarBytesColumn.Reader`` (idempotent)."""
    columns.VarBytesColumn.Reader._read_offsets_and_lengths = _read_offsets_and_lengths
