"""Read one list out of a large JSON object, element by element, without holding the whole.

`kubectl get nodes -o json` can be ~75 MiB; here the text is decoded in chunks and each
wanted element with `raw_decode`, then dropped: peak memory is a chunk plus one element.
The grammar is exactly `json.loads`'s.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable
from typing import IO, Any

CHUNK = 1 << 20
_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
_NUMBER_CHARS = frozenset("0123456789.eE+-")


class NotJson(ValueError):
    pass


class NotAnObject(ValueError):
    """Valid JSON, but not an object with the wanted list."""


class _Text:
    """Text decoded from `raw` (UTF-8, a BOM tolerated, bad bytes replaced) as it is needed."""

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
        self.buf = ""
        self.pos = 0
        self.eof = False

    def more(self) -> bool:
        """Read on; False at the end. Reads at least as much as is buffered, so a value
        longer than a chunk costs O(n log n), not O(n²), to retry."""
        if self.eof:
            return False
        chunk = self.raw.read(max(CHUNK, len(self.buf) - self.pos))
        if not chunk:
            self.eof = True
            tail = self.decoder.decode(b"", final=True)
        else:
            tail = self.decoder.decode(chunk)
        self.buf = self.buf[self.pos :] + tail
        self.pos = 0
        return bool(chunk) or bool(tail)

    def peek(self) -> str:
        """The next character after white space ("" at the end)."""
        while True:
            self.pos = _SPACE.match(self.buf, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.more():
                return ""

    def expect(self, char: str) -> None:
        if self.peek() != char:
            raise NotJson(f"expected {char!r}")
        self.pos += 1

    def value(self) -> Any:
        """One complete JSON value at the cursor."""
        self.peek()
        while True:
            try:
                found, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError:
                if self.more():
                    continue
                raise NotJson("not JSON") from None
            # A number may continue in the next chunk ("12" of "123", "0" of "0.5").
            number = isinstance(found, (int, float)) and not isinstance(found, bool)
            cut = end == len(self.buf) or self.buf[end] in _NUMBER_CHARS
            if number and cut and not self.eof and self.more():
                continue
            self.pos = end
            return found


def each_element(
    raw: IO[bytes], key: str, handle: Callable[[Any], None], restart: Callable[[], None]
) -> None:
    """Call `handle` with each element of the list under `key` (`restart` first: a repeated key's
    last list counts). NotJson where `json.loads` would fail, NotAnObject when there is no list."""
    text = _Text(raw)
    if text.peek() != "{":
        text.value()  # valid JSON of another shape, or NotJson
        if text.peek():
            raise NotJson("extra data")
        raise NotAnObject(f"no {key!r} list")
    text.pos += 1
    found = False
    first = True
    while True:
        char = text.peek()
        if char == "}" and first:
            text.pos += 1
            break
        name = text.value()
        if not isinstance(name, str):
            raise NotJson("a key that is not a string")
        text.expect(":")
        if name == key and text.peek() == "[":
            found = True
            restart()
            _each(text, handle)
        else:
            value = text.value()
            if name == key:
                found = False  # the last duplicate wins, as in json.loads
                del value
        first = False
        char = text.peek()
        text.pos += 1
        if char == "}":
            break
        if char != ",":
            raise NotJson("expected ',' or '}'")
    if text.peek():
        raise NotJson("extra data")
    if not found:
        raise NotAnObject(f"no {key!r} list")


def _each(text: _Text, handle: Callable[[Any], None]) -> None:
    text.expect("[")
    if text.peek() == "]":
        text.pos += 1
        return
    while True:
        handle(text.value())
        char = text.peek()
        text.pos += 1
        if char == "]":
            return
        if char != ",":
            raise NotJson("expected ',' or ']'")
