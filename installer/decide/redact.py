"""Keep secrets out of everything we print or log, and off every child's command line.

Any string is a valid password, so masking looks for it as a token: glued to a longer name
(`values.yaml` for `values`) it is that name. Everything else is masked in every form a tool
may print it (trimmed, JSON/YAML/Python-escaped, percent-encoded, cut short).
"""

from __future__ import annotations

import bisect
import json
import logging
import re
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Sequence

MASK = "********"
# A cut-off password is masked once this much of it (or all but its last character) shows.
CUT_MIN = 3
_CUT_AT = r"(?=\n|…|\.\.\.|\Z)"
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
# Connectors inside a name: `values.yaml`, `tracebloc/client`, `my-values`.
_JOINERS = "./-"
# Where a credential is handed to a child: a key or flag naming one, or helm's --set family.
_CREDENTIAL = re.compile(r"pass|secret|token|credential|auth", re.IGNORECASE)
_SET_FLAGS = ("--set", "--set-string", "--set-literal", "--set-json", "--set-file")
_USERINFO = re.compile(r"://(?P<userinfo>[^/?#\s]*)@")
# A URL's password is masked wherever a URL is printed; userinfo runs to the last `@`.
_URL_PASSWORD = re.compile(r"(?P<head>://[^/?#\s\"'<>`\\:@]*:)(?P<password>[^/?#\s\"<>`\\]*)@")


def _word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _glued_left(text: str, start: int, secret: str) -> bool:
    """The occurrence at `start` continues a name to its left (`tracebloc/client`), or is
    the name of a flag (`--values`)."""
    if start == 0 or not _word(secret[0]):
        return False
    before = text[start - 1]
    if _word(before) or before == "-":
        return True
    return before in _JOINERS and start >= 2 and _word(text[start - 2])


def _glued_right(text: str, end: int, secret: str) -> bool:
    """The occurrence ending at `end` continues into a name (`values.yaml`), but a sentence's
    full stop after it (`… hunter2.`) does not make it a name."""
    if end >= len(text) or not _word(secret[-1]):
        return False
    after = text[end]
    if _word(after):
        return True
    return after in _JOINERS and end + 1 < len(text) and _word(text[end + 1])


def forms(secret: str) -> list[str]:
    """Every way a tool may print `secret`, longest first."""
    import yaml  # here, not at the top: `--version` imports this module and stays instant

    dumps: dict[tuple[str, bool], str] = {}

    def yaml_double_quoted(text: str, unicode_ok: bool) -> str:
        # PyYAML's emitter is slow and ASCII comes out the same either way: emitted once.
        key = (text, unicode_ok or text.isascii())
        if key not in dumps:
            dumped = yaml.safe_dump(text, default_style='"', allow_unicode=key[1], width=1 << 30)
            dumps[key] = dumped[dumped.index('"') + 1 : dumped.rindex('"')]
        return dumps[key]

    printers: list[Callable[[str], str]] = [
        lambda text: text,
        lambda text: json.dumps(text)[1:-1],
        lambda text: json.dumps(text, ensure_ascii=False)[1:-1],
        lambda text: repr(text)[1:-1],
        lambda text: text.replace("'", "''"),  # YAML single-quoted
        lambda text: yaml_double_quoted(text, True),
        lambda text: yaml_double_quoted(text, False),
        lambda text: urllib.parse.quote(text, safe=""),
        lambda text: urllib.parse.quote_plus(text, safe=""),
        urllib.parse.quote,
    ]
    found: set[str] = set()
    for base in {secret, secret.strip()} - {""}:
        for printer in printers:
            try:
                found.add(printer(base))
            except (UnicodeError, ValueError, yaml.YAMLError):
                continue  # text no printer could have printed (lone surrogates)
    return sorted(found - {""}, key=len, reverse=True)


class _Cut:
    """Where a first part of `form` (CUT_MIN characters or more) ends the text, a line, or stands
    before `…`: the longest at each place. Linear in the form's length (a binary search per
    occurrence), so a long token cannot make the matcher quadratic."""

    _ENDS = re.compile(r"(?=\n|…|\.\.\.)")

    def __init__(self, form: str) -> None:
        self.form = form
        self.least = max(1, min(CUT_MIN, len(form) - 1))
        # The password's first word alone (`k3d` of `k3d-Secret`) is likely a name: not masked.
        self.first = _first_word(form)
        self.head = re.compile("(?=" + re.escape(form[: self.least]) + ")")

    def spans(self, text: str) -> list[tuple[int, int]]:
        form, least, most = self.form, self.least, len(self.form) - 1
        found: list[tuple[int, int]] = []
        ends: list[int] | None = None
        last = 0
        for match in self.head.finditer(text):
            start = match.start()
            if start < last:
                continue
            # The longest n with text[start:start + n] == form[:n], by halving.
            low, high = least, min(most, len(text) - start)
            if high < low:
                continue
            while low < high:
                middle = (low + high + 1) // 2
                if text[start : start + middle] == form[:middle]:
                    low = middle
                else:
                    high = middle - 1
            if ends is None:
                ends = [m.start() for m in self._ENDS.finditer(text)] + [len(text)]
            # The last place a part may end: a line end, `…`, `...` or the text's end.
            index = bisect.bisect_right(ends, start + low) - 1
            if index >= 0 and ends[index] - start == self.first:
                index -= 1
            if index >= 0 and ends[index] >= start + least:
                found.append((start, ends[index]))
                last = ends[index]
        return found


def _cut_pattern(form: str) -> _Cut | None:
    return _Cut(form) if len(form) >= 2 else None


def _first_word(form: str) -> int:
    """The length of `form`'s first run of word characters when a non-word character ends
    it (0 when the form starts with one, or is one word)."""
    n = 0
    while n < len(form) and _word(form[n]):
        n += 1
    return n if 0 < n < len(form) else 0


# YAML may print a line break in a value followed by blank lines and indentation.
_BREAKS = "\n\r\x85\u2028\u2029"
_SPLIT_BREAKS = re.compile(f"([{_BREAKS}])")
_FOLDED = f"(?:[ \\t]*[{_BREAKS}])*[ \\t]*"


def _pattern(form: str) -> re.Pattern[str]:
    """`form` literally, except that percent-escapes match in either case (`%2f`, `%2F`) and
    a line break matches however a printer folded it."""
    pieces = _SPLIT_BREAKS.split(form)  # text, break, text, break, …, text
    return re.compile(
        "".join(
            _literal(piece) if index % 2 == 0 else re.escape(piece) + _FOLDED
            for index, piece in enumerate(pieces)
        )
    )


def _literal(form: str) -> str:
    parts, last = [], 0
    for match in _PERCENT.finditer(form):
        parts.append(re.escape(form[last : match.start()]))
        hex_digits = match.group()[1:]
        parts.append("%" + "".join(f"[{c.upper()}{c.lower()}]" for c in hex_digits))
        last = match.end()
    parts.append(re.escape(form[last:]))
    return "".join(parts)


class _Whole:
    """`_pattern(form)`, compiled only once a text holds the form's first characters: compiling
    a long token's patterns is slow, and most are never needed."""

    HEAD = 32

    def __init__(self, form: str) -> None:
        self.form = form
        cut = min(len(form), self.HEAD)
        while cut < len(form) and "%" in form[max(0, cut - 2) : cut]:
            cut += 1  # never inside a percent-escape: %2F must match %2f too
        self.head = _pattern(form[:cut])
        self._whole: re.Pattern[str] | None = self.head if cut == len(form) else None

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        if self._whole is None:
            if self.head.search(text) is None:
                return iter(())
            self._whole = _pattern(self.form)
        return self._whole.finditer(text)


class Redactor:
    """Replaces every known secret in a text with a mask (see the module docstring)."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        self._secrets: list[str] = []
        self._patterns: list[tuple[str, _Whole, _Cut | None]] = []
        self.add(*secrets)

    @property
    def secrets(self) -> tuple[str, ...]:
        return tuple(self._secrets)

    def add(self, *secrets: str | None) -> None:
        found = {s for s in secrets if s} | set(self._secrets)
        if found == set(self._secrets):
            return
        self._secrets = sorted(found, key=len, reverse=True)
        self._patterns = [
            (form, _Whole(form), _cut_pattern(form))
            for secret in self._secrets
            for form in forms(secret)
        ]

    def __call__(self, text: str) -> str:
        if "://" in text and "@" in text:
            text = _URL_PASSWORD.sub(_masked_password, text)
        if not self._patterns or not text:
            return text
        spans: list[tuple[int, int]] = []
        for form, whole, cut in self._patterns:
            for match in whole.finditer(text):
                if not (
                    _glued_left(text, match.start(), form) or _glued_right(text, match.end(), form)
                ):
                    spans.append(match.span())
            for start, end in cut.spans(text) if cut is not None else ():
                if not _glued_left(text, start, form):
                    spans.append((start, end))
        if not spans:
            return text
        spans.sort()
        out, position = [], 0
        for start, end in spans:
            if end <= position:
                continue
            out.append(text[position : max(start, position)])
            if start >= position:
                out.append(MASK)
            position = end
        out.append(text[position:])
        return "".join(out)

    def leaks(self, parts: Sequence[str]) -> bool:
        """A secret would be on a child's command line as a value: after a credential flag, as a
        credential key's value, as a whole `--set` value, or as a URL's password. A name that
        merely contains it (`tracebloc/client`) is not; secrets go only in the values file."""
        return any(_carries(parts, secret) for secret in self._secrets)


# A remedy's `user:password@host` template is no password; a real URL's weak one is masked.
_TEMPLATE = re.compile(r"://\[?user:password@\]?host\b")


def _masked_password(match: re.Match[str]) -> str:
    if match["password"] in ("", MASK) or _TEMPLATE.match(match.string, match.start()):
        return match.group()
    return match["head"] + MASK + "@"


def _carries(parts: Sequence[str], secret: str) -> bool:
    previous = ""
    for part in parts:
        if secret in part:
            flag = previous.startswith("-") and "=" not in previous
            if flag and _CREDENTIAL.search(previous):
                return True
            setting = previous in _SET_FLAGS or part.startswith(_SET_FLAGS)
            for item in re.split(r"(?<!\\),", part):
                key, equals, value = item.partition("=")
                if not equals:
                    continue
                if _CREDENTIAL.search(key) and secret in value:
                    return True
                if setting and secret in (value, value.rpartition("=")[2]):
                    return True
            for match in _USERINFO.finditer(part):
                if secret in match["userinfo"].partition(":")[2]:
                    return True
        previous = part
    return False


class RedactingFilter(logging.Filter):
    """Rewrites each record's final message through the redactor before any handler sees it."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self.redactor(record.getMessage())
        record.args = None
        return True
