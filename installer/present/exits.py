"""How a run that did not answer ends: the one-line error with its remedy on stderr, and
with `--json` one JSON object on stdout; the exit code is the caller's."""

from __future__ import annotations

import json
from typing import Any

from installer.decide import printable
from installer.present import output

RESUME = (
    "the values file is intact; run tracebloc-installer again to resume "
    "(it recovers a half-finished helm release first)"
)


def within(exc: BaseException) -> KeyboardInterrupt | None:
    """The KeyboardInterrupt (or Terminated) `exc` was raised while handling, if any."""
    seen: set[int] = set()
    link = exc.__cause__ or exc.__context__
    while link is not None and id(link) not in seen:
        if isinstance(link, KeyboardInterrupt):
            return link
        seen.add(id(link))
        link = link.__cause__ or link.__context__
    return None


def stopped(as_json: bool, command: str, signum: int | None, said: str) -> int:
    """Ctrl-C (signum None) or SIGTERM/SIGHUP: the shell's convention, 128 + the signal."""
    word, code = ("interrupted", 130) if signum is None else ("terminated", 128 + signum)
    return failed(as_json, code, word, said or (RESUME if command == "install" else ""))


def failed(
    as_json: bool, code: int, message: str, remedy: str, data: dict[str, Any] | None = None
) -> int:
    output.fail(message, remedy)
    if as_json:
        document: dict[str, Any] = {"ok": False, "exit": code, "reason": message}
        if remedy:
            document["remedy"] = remedy
        document.update(data or {})
        output.write_stdout(json.dumps(document, indent=2) + "\n")
    return code


def declined(as_json: bool, code: int, detail: str) -> int:
    output.stderr(f"Nothing was changed. {printable.shown(detail)}\n")
    if as_json:
        output.write_stdout(
            json.dumps(
                {
                    "ok": False,
                    "exit": code,
                    "declined": True,
                    "reason": "Nothing was changed. " + detail,
                },
                indent=2,
            )
            + "\n"
        )
    return code
