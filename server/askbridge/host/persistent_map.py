"""An immutable hash map whose updates share structure (a hash array mapped trie).

Why it exists: the session projection (projection.py) is a pure fold over
logs of millions of events. Every earlier state must stay valid, yet one
event must cost the same whether the session holds ten or ten thousand
tracked questions. Copying a dict per change costs O(size); this map copies
only the path from the root to the changed key (a few tuples of at most 32
slots, about log32(size) of them) and shares everything else.

Usage:

    m0 = PersistentMap[str, int]()
    m1 = m0.set("a", 1)          # m0 is unchanged
    m1.get("a") == 1; m0.get("a") is None
    m1.delete("zz") is m1        # removing a missing key returns the same map
    len(m1), list(m1.items())    # iteration order is unspecified

Keys need a stable hash for the map's lifetime (str keys in askbridge).
Layout: a branch holds a 32-bit bitmap of occupied slots and a tuple of
children; a child is a leaf `(hash, key, value)`, a branch, or — only once all
64 hash bits are used up — a collision bucket of leaves with equal hashes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")

_SHIFT = 5
_MASK = 0x1F
_HASH_BITS = 64
_HASH_MASK = (1 << _HASH_BITS) - 1
_MISSING: Any = object()

# A leaf is a plain tuple (hash, key, value); branches and buckets are the classes below.
_Leaf = tuple[int, Any, Any]


class _Branch:
    __slots__ = ("bitmap", "slots")

    def __init__(self, bitmap: int, slots: tuple[Any, ...]) -> None:
        self.bitmap = bitmap
        self.slots = slots


class _Bucket:
    """Leaves whose 64-bit hashes are all equal (only below the deepest branch level)."""

    __slots__ = ("leaves",)

    def __init__(self, leaves: tuple[_Leaf, ...]) -> None:
        self.leaves = leaves


_EMPTY_ROOT = _Branch(0, ())


def _lookup(node: Any, h: int, key: Any) -> Any:
    shift = 0
    while True:
        kind = type(node)
        if kind is _Branch:
            bit = 1 << ((h >> shift) & _MASK)
            if not node.bitmap & bit:
                return _MISSING
            node = node.slots[(node.bitmap & (bit - 1)).bit_count()]
            shift += _SHIFT
        elif kind is tuple:
            return node[2] if node[0] == h and node[1] == key else _MISSING
        else:
            for leaf in node.leaves:
                if leaf[1] == key:
                    return leaf[2]
            return _MISSING


def _join(a: _Leaf, b: _Leaf, shift: int) -> Any:
    """The smallest subtree holding two leaves with different keys, rooted at `shift`."""
    if shift >= _HASH_BITS:
        return _Bucket((a, b))
    ia = (a[0] >> shift) & _MASK
    ib = (b[0] >> shift) & _MASK
    if ia == ib:
        return _Branch(1 << ia, (_join(a, b, shift + _SHIFT),))
    return _Branch((1 << ia) | (1 << ib), (a, b) if ia < ib else (b, a))


def _assoc(node: _Branch, leaf: _Leaf, shift: int) -> tuple[_Branch, bool]:
    """`node` with `leaf` in it, and whether its key is new."""
    h, key = leaf[0], leaf[1]
    bit = 1 << ((h >> shift) & _MASK)
    idx = (node.bitmap & (bit - 1)).bit_count()
    slots = node.slots
    if not node.bitmap & bit:
        return _Branch(node.bitmap | bit, (*slots[:idx], leaf, *slots[idx:])), True
    child = slots[idx]
    kind = type(child)
    new_child: Any
    if kind is tuple:
        added = not (child[0] == h and child[1] == key)
        new_child = _join(child, leaf, shift + _SHIFT) if added else leaf
    elif kind is _Branch:
        new_child, added = _assoc(child, leaf, shift + _SHIFT)
    else:  # a bucket: every key routed here has exactly this hash
        kept = tuple(x for x in child.leaves if x[1] != key)
        added = len(kept) == len(child.leaves)
        new_child = _Bucket((*kept, leaf))
    return _Branch(node.bitmap, (*slots[:idx], new_child, *slots[idx + 1 :])), added


def _dissoc(node: _Branch, h: int, key: Any, shift: int) -> _Branch:
    """`node` without `key`; the very same node when `key` is absent."""
    bit = 1 << ((h >> shift) & _MASK)
    if not node.bitmap & bit:
        return node
    idx = (node.bitmap & (bit - 1)).bit_count()
    slots = node.slots
    child = slots[idx]
    kind = type(child)
    new_child: Any
    if kind is tuple:
        if not (child[0] == h and child[1] == key):
            return node
        new_child = None
    elif kind is _Branch:
        sub = _dissoc(child, h, key, shift + _SHIFT)
        if sub is child:
            return node
        # A branch left with one leaf gives way to it, so lookups stay short.
        one_leaf = len(sub.slots) == 1 and type(sub.slots[0]) is tuple
        new_child = sub.slots[0] if one_leaf else sub
    else:
        kept = tuple(x for x in child.leaves if x[1] != key)
        if len(kept) == len(child.leaves):
            return node
        new_child = kept[0] if len(kept) == 1 else _Bucket(kept)
    if new_child is None:
        return _Branch(node.bitmap & ~bit, (*slots[:idx], *slots[idx + 1 :]))
    return _Branch(node.bitmap, (*slots[:idx], new_child, *slots[idx + 1 :]))


def _walk(node: Any) -> Iterator[_Leaf]:
    kind = type(node)
    if kind is tuple:
        yield node
    elif kind is _Branch:
        for child in node.slots:
            yield from _walk(child)
    else:
        yield from node.leaves


class PersistentMap(Generic[K, V]):
    """An immutable mapping; `set` and `delete` return a new map sharing most of this one."""

    __slots__ = ("_root", "_size")

    def __init__(self, _root: _Branch = _EMPTY_ROOT, _size: int = 0) -> None:
        self._root = _root
        self._size = _size

    def get(self, key: K, default: V | None = None) -> V | None:
        value = _lookup(self._root, hash(key) & _HASH_MASK, key)
        return default if value is _MISSING else value

    def __contains__(self, key: object) -> bool:
        return _lookup(self._root, hash(key) & _HASH_MASK, key) is not _MISSING

    def set(self, key: K, value: V) -> PersistentMap[K, V]:
        root, added = _assoc(self._root, (hash(key) & _HASH_MASK, key, value), 0)
        return PersistentMap(root, self._size + added)

    def delete(self, key: K) -> PersistentMap[K, V]:
        root = _dissoc(self._root, hash(key) & _HASH_MASK, key, 0)
        return self if root is self._root else PersistentMap(root, self._size - 1)

    def __len__(self) -> int:
        return self._size

    def items(self) -> Iterator[tuple[K, V]]:
        for leaf in _walk(self._root):
            yield leaf[1], leaf[2]

    def values(self) -> Iterator[V]:
        for leaf in _walk(self._root):
            yield leaf[2]
