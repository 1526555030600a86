"""Every failure the engine expects, carrying what happened and what to do next.

`cli.main` is the one handler: it prints `message` (and `remedy`) on one or two lines and
exits with `exit_code`; nothing here prints.
"""

from __future__ import annotations

from collections.abc import Sequence


class InstallerError(Exception):
    """A failure the user can act on. Exit code 1 unless a subclass says otherwise."""

    exit_code = 1

    def __init__(self, message: str, remedy: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.remedy = remedy

    def __str__(self) -> str:
        return self.message


class BadInput(InstallerError):
    """The user's flags or environment cannot be used as given."""

    exit_code = 2


class Refused(InstallerError):
    """Installing would risk what is already installed (another client, or a release that
    could not be read): nothing was changed."""

    exit_code = 3


class ToolNotFound(InstallerError):
    def __init__(self, tool: str, remedy: str = "") -> None:
        super().__init__(
            f"{tool} was not found on PATH",
            remedy or f"install {tool}",
        )
        self.tool = tool


class ToolTimeout(InstallerError):
    def __init__(self, argv: Sequence[str], seconds: float, remedy: str = "") -> None:
        super().__init__(
            f"`{' '.join(argv)}` did not finish within {seconds:g}s and was stopped",
            remedy or "check that the cluster is reachable, or raise TB_PROBE_TIMEOUT_S",
        )
        self.argv = list(argv)
        self.seconds = seconds
        self.output = ""  # what the tool said before it was stopped, when it was captured


class ToolFailed(InstallerError):
    """A run that was required to succeed did not: `reason` is why, in one line (the tool's
    last stderr line and exit code, or why it gave no answer at all, then `rc` is None)."""

    def __init__(self, argv: Sequence[str], reason: str, rc: int | None, remedy: str = "") -> None:
        super().__init__(f"`{' '.join(argv)}` failed: {reason}", remedy)
        self.argv = list(argv)
        self.reason = reason
        self.rc = rc
