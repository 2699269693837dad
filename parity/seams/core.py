"""The two ways parity changes a third-party object: a layered wrapper on a callable, and a presented value.

`seam(owner, attr)` is the one wrapper on `owner.attr` (a method on a class or an instance, a module
function, a hook slot): it goes in when its first layer is added and comes out, putting back exactly
what was there, when its last layer leaves. A layer is `fn(inner, *args, **kwargs)`; `inner(*args,
**kwargs)` calls the next layer down, then the original. The newest layer is the outermost, which is
the order separate patches nested in when each stage wrapped the function itself.

`present(owner, attr, value)` sets a plain value (a device module's function, a driver slot, a module
global) and returns what puts the old one back.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

Layer = Callable[..., Any]

_MISSING = object()


class Seam:
    """The one wrapper on `owner.attr`, and the layers registered on it (oldest first)."""

    def __init__(self, owner: Any, attr: str) -> None:
        self.owner, self.attr = owner, attr
        self.layers: list[Layer] = []
        self._own: Any = _MISSING  # what owner's own __dict__ held before (_MISSING: it inherited the value)
        self._original: Any = None
        self._wrapper: Callable[..., Any] | None = None

    def _install(self) -> None:
        self._own = _own_value(self.owner, self.attr)
        self._original = getattr(self.owner, self.attr, None)
        layers, original = self.layers, self._original

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            now = tuple(layers)  # a call keeps the layers it started with, as nested patches did
            return _call(now, len(now) - 1, original, args, kwargs)

        # attributes of the function object (a def has no declared ones to assign to)
        vars(wrapper).update({"__wrapped__": original, "parity_seam": self})
        self._wrapper = wrapper
        setattr(self.owner, self.attr, wrapper)

    def _uninstall(self) -> None:
        if _own_value(self.owner, self.attr) is self._wrapper:  # never undo what someone set over it
            if self._own is _MISSING:
                delattr(self.owner, self.attr)
            else:
                setattr(self.owner, self.attr, self._own)
        self._wrapper = None
        _SEAMS.pop((id(self.owner), self.attr), None)

    def add(self, layer: Layer) -> Callable[[], None]:
        """Register `layer` as the outermost; returns what removes it (and the wrapper with the last one)."""
        if not self.layers:
            _SEAMS[(id(self.owner), self.attr)] = self
            self._install()
        self.layers.append(layer)

        def remove() -> None:
            if layer in self.layers:
                self.layers.remove(layer)
                if not self.layers:
                    self._uninstall()

        return remove

    @contextlib.contextmanager
    def layer(self, layer: Layer) -> Iterator[None]:
        remove = self.add(layer)
        try:
            yield
        finally:
            remove()

    @property
    def original(self) -> Any:
        """What the wrapper calls last (the value before the first layer), or the current value when idle."""
        return self._original if self.layers else getattr(self.owner, self.attr, None)


_SEAMS: dict[tuple[int, str], Seam] = {}


def _own_value(owner: Any, attr: str) -> Any:
    own = getattr(owner, "__dict__", None)
    if own is None or attr not in own:
        return _MISSING
    return own[attr]


def _call(layers: tuple[Layer, ...], i: int, original: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if i < 0:
        return original(*args, **kwargs) if original is not None else None
    layer = layers[i]

    def inner(*a: Any, **kw: Any) -> Any:
        return _call(layers, i - 1, original, a, kw)

    return layer(inner, *args, **kwargs)


def seam(owner: Any, attr: str) -> Seam:
    """The seam on `owner.attr`: the installed one while it has layers, else a new one."""
    return _SEAMS.get((id(owner), attr)) or Seam(owner, attr)


def present(owner: Any, attr: str, value: Any) -> Callable[[], None]:
    """Set `owner.attr` (or `owner[attr]` for a mapping); returns what puts back exactly what was there."""
    if isinstance(owner, MutableMapping):
        saved = owner.get(attr, _MISSING)
        owner[attr] = value

        def undo_item() -> None:
            if saved is _MISSING:
                owner.pop(attr, None)
            else:
                owner[attr] = saved

        return undo_item
    saved = _own_value(owner, attr) if isinstance(owner, type) else getattr(owner, attr, _MISSING)
    setattr(owner, attr, value)

    def undo() -> None:
        if saved is _MISSING:
            with contextlib.suppress(AttributeError):
                delattr(owner, attr)
        else:
            setattr(owner, attr, saved)

    return undo


def present_all(owner: Any, values: dict[str, Any]) -> Callable[[], None]:
    """`present` for several attributes; the undo puts them back in reverse."""
    undos = [present(owner, key, value) for key, value in values.items()]

    def undo() -> None:
        for one in reversed(undos):
            one()

    return undo
