"""Keep secrets out of everything we print or log, and off every child's command line.

Any string is a valid password, including ordinary words (`client`, `values`, `tracebloc`)
and single characters. So masking looks for the password as a token, not as a substring:
an occurrence glued to a longer name (`tracebloc/client`, `values.yaml`, `clients`) is that
name, not the password, and is left alone. Everything else is masked, in every form a tool
may print it: as given, without its surrounding whitespace, JSON-, YAML- or Python-escaped,
percent-encoded, or cut short at the end of a line or before `…`.
"""

from __future__ import annotations

import json
import logging
import re
import urllib.parse
from collections.abc import Callable, Iterable, Sequence

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

    def yaml_double_quoted(text: str, unicode_ok: bool) -> str:
        dumped = yaml.safe_dump(text, default_style='"', allow_unicode=unicode_ok,
                                width=1 << 30)  # fmt: skip
        return dumped[dumped.index('"') + 1 : dumped.rindex('"')]

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


def _cut_pattern(form: str) -> re.Pattern[str] | None:
    """The first part of `form`, longest first, where a line or the text ends or `…` starts."""
    least = max(1, min(CUT_MIN, len(form) - 1))
    # The password's first word alone (`k3d` of `k3d-Secret-9!`) is not taken for the
    # password cut short: it is as likely a name the engine prints (the tool `k3d`), and
    # masking it would corrupt what is shown; one character more (`k3d-`) is masked.
    first = _first_word(form)
    lengths = [n for n in range(len(form) - 1, least - 1, -1) if n != first]
    if not lengths:
        return None
    return re.compile("(?:" + "|".join(re.escape(form[:n]) for n in lengths) + ")" + _CUT_AT)


def _first_word(form: str) -> int:
    """The length of `form`'s first run of word characters when a non-word character ends
    it (0 when the form starts with one, or is one word)."""
    n = 0
    while n < len(form) and _word(form[n]):
        n += 1
    return n if 0 < n < len(form) else 0


# A line break inside a printed value may come out followed by blank lines and indentation:
# YAML folds a single-quoted multi-line scalar that way ('a\n\n  b' is "a\nb"; NEL, LS and
# PS are line breaks to YAML too).
_BREAKS = "\n\r\x85\u2028\u2029"
_SPLIT_BREAKS = re.compile(f"([{_BREAKS}])")
_FOLDED = f"(?:[ \\t]*[{_BREAKS}])*[ \\t]*"


def _pattern(form: str) -> re.Pattern[str]:
    """`form` literally, except that percent-escapes match in either case (`%2f`, `%2F`) and
    a line break matches however a printer folded it."""
    pieces = _SPLIT_BREAKS.split(form)  # text, break, text, break, …, text
    return re.compile("".join(
        _literal(piece) if index % 2 == 0 else re.escape(piece) + _FOLDED
        for index, piece in enumerate(pieces)))  # fmt: skip


def _literal(form: str) -> str:
    parts, last = [], 0
    for match in _PERCENT.finditer(form):
        parts.append(re.escape(form[last : match.start()]))
        hex_digits = match.group()[1:]
        parts.append("%" + "".join(f"[{c.upper()}{c.lower()}]" for c in hex_digits))
        last = match.end()
    parts.append(re.escape(form[last:]))
    return "".join(parts)


class Redactor:
    """Replaces every known secret in a text with a mask (see the module docstring)."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        self._secrets: list[str] = []
        self._patterns: list[tuple[str, re.Pattern[str], re.Pattern[str] | None]] = []
        self.add(*secrets)

    @property
    def secrets(self) -> tuple[str, ...]:
        return tuple(self._secrets)

    def add(self, *secrets: str | None) -> None:
        found = {s for s in secrets if s} | set(self._secrets)
        if found == set(self._secrets):
            return
        self._secrets = sorted(found, key=len, reverse=True)
        self._patterns = [(form, _pattern(form), _cut_pattern(form))
                          for secret in self._secrets for form in forms(secret)]  # fmt: skip

    def __call__(self, text: str) -> str:
        if not self._patterns or not text:
            return text
        spans: list[tuple[int, int]] = []
        for form, whole, cut in self._patterns:
            for match in whole.finditer(text):
                if not (_glued_left(text, match.start(), form)
                        or _glued_right(text, match.end(), form)):  # fmt: skip
                    spans.append(match.span())
            for match in cut.finditer(text) if cut is not None else ():
                if not _glued_left(text, match.start(), form):
                    spans.append(match.span())
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
        """A secret would be handed to a child as a value on its command line: after a
        credential flag (`--password X`), as a credential key's value (`password=X`,
        `--set clientPassword=X`), as a whole value of helm's `--set` family, or as the password
        of a URL (`https://u:X@host`).

        A name that merely equals or contains the password (release `tracebloc`, the chart
        `tracebloc/client`, a path to `values.yaml`) is not a credential passed to the child:
        the engine passes secrets only in the values file, and this guard is the backstop
        against the one way a bug would leak them, passing one as a value."""
        return any(_carries(parts, secret) for secret in self._secrets)


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
