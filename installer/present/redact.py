"""Keep secrets out of everything we print or log."""

from __future__ import annotations

import logging
from collections.abc import Iterable

MASK = "********"
LEAK_MIN_LENGTH = 4


class Redactor:
    """Replaces every known secret in a text with a mask; longest secret first."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        self._secrets: list[str] = []
        self.add(*secrets)

    def add(self, *secrets: str | None) -> None:
        found = {s for s in secrets if s} | set(self._secrets)
        self._secrets = sorted(found, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, MASK)
        return text

    def leaks(self, parts: Iterable[str]) -> bool:
        # A secret of a few characters occurs by chance inside ordinary words ("p" in
        # "upgrade"); refusing on it would block every command. Secrets reach a child only
        # through the values file, so this check is a backstop for real-length secrets.
        return any(secret in part for part in parts for secret in self._secrets
                   if len(secret) >= LEAK_MIN_LENGTH)  # fmt: skip


class RedactingFilter(logging.Filter):
    """Rewrites each record's final message through the redactor before any handler sees it."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self.redactor(record.getMessage())
        record.args = None
        return True
