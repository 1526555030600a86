"""Running a tool and reading its answer: the one helper every reader goes through.

`answer` returns the `Result` whatever the exit code, or a `NoAnswer` saying why there is
none (not found, could not start, deadline, a secret on the command line). `checked` wants
exit 0 or raises `ToolFailed`; `Caller` binds environment, redactor and deadline once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, TypeVar

from installer.decide.errors import InstallerError, ToolFailed, ToolTimeout
from installer.decide.redact import Redactor
from installer.decide.tooling import Tool
from installer.edges import proc
from installer.edges.childio import last_line

T = TypeVar("T")


@dataclass(frozen=True)
class NoAnswer:
    """Why a tool gave no answer at all. `error` is the failure itself (None when there was
    no tool to run)."""

    reason: str
    error: InstallerError | None = None

    @property
    def timed_out(self) -> bool:
        return isinstance(self.error, ToolTimeout)


def reason(result: proc.Result) -> str:
    """A failed run in one line: the last line of what it said on stderr, and its exit code."""
    return last_line(result.stderr, result.rc)


@dataclass(frozen=True)
class Caller:
    """One binding of the environment, the redactor and the deadline around `proc.run`."""

    env: Mapping[str, str] | None = None
    redactor: Redactor | None = None
    timeout: float = 60.0

    def run(
        self,
        tool: Tool,
        args: Sequence[str],
        *,
        timeout: float | None = None,
        grace: float = 0.0,
        stdout: IO[bytes] | None = None,
        terminal: proc.Terminal = None,
        keep_terminal: bool = False,
        input: bytes | None = None,
    ) -> proc.Result:
        """`proc.run` with this binding: raises what it raises."""
        return proc.run(
            tool,
            args,
            timeout=self.timeout if timeout is None else timeout,
            env=self.env,
            redactor=self.redactor,
            grace=grace,
            stdout=stdout,
            terminal=terminal,
            keep_terminal=keep_terminal,
            input=input,
        )

    def answer(
        self,
        tool: Tool | None,
        args: Sequence[str],
        *,
        timeout: float | None = None,
        missing: str = "the tool was not found",
        stdout: IO[bytes] | None = None,
        keep_terminal: bool = False,
        input: bytes | None = None,
    ) -> proc.Result | NoAnswer:
        """The result whatever its exit code, or why there is none. `tool` None means it was
        not found; `missing` then is the reason ("kubectl was not found")."""
        if tool is None:
            return NoAnswer(missing)
        try:
            return self.run(
                tool, args, timeout=timeout, stdout=stdout, keep_terminal=keep_terminal, input=input
            )
        except InstallerError as exc:
            return NoAnswer(exc.message, exc)

    def checked(
        self,
        tool: Tool | None,
        args: Sequence[str],
        *,
        timeout: float | None = None,
        missing: str = "the tool was not found",
        stdout: IO[bytes] | None = None,
        keep_terminal: bool = False,
    ) -> proc.Result:
        """The result of a run that exited 0; otherwise ToolFailed carrying the reason."""
        got = self.answer(
            tool, args, timeout=timeout, missing=missing, stdout=stdout, keep_terminal=keep_terminal
        )
        shown = (tool.name, *args) if tool is not None else tuple(args)
        if isinstance(got, NoAnswer):
            raise ToolFailed(shown, got.reason, None) from got.error
        if got.rc != 0:
            raise ToolFailed(shown, reason(got), got.rc)
        return got


def answer(
    tool: Tool | None,
    args: Sequence[str],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    redactor: Redactor | None = None,
    missing: str = "the tool was not found",
    stdout: IO[bytes] | None = None,
    keep_terminal: bool = False,
) -> proc.Result | NoAnswer:
    """`Caller(env, redactor, timeout).answer(…)`, for a reader that runs one tool."""
    return Caller(env, redactor, timeout).answer(
        tool, args, missing=missing, stdout=stdout, keep_terminal=keep_terminal
    )


def checked(
    tool: Tool | None,
    args: Sequence[str],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    redactor: Redactor | None = None,
    missing: str = "the tool was not found",
    stdout: IO[bytes] | None = None,
) -> proc.Result:
    """`Caller(env, redactor, timeout).checked(…)`."""
    return Caller(env, redactor, timeout).checked(tool, args, missing=missing, stdout=stdout)


def parsed(
    tool: Tool | None,
    args: Sequence[str],
    parse: Callable[[bytes], T],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    redactor: Redactor | None = None,
    missing: str = "the tool was not found",
) -> tuple[T | None, str]:
    """What `parse` makes of the tool's stdout, or None and why: no answer, a non-zero
    exit, or output `parse` refused (its ValueError)."""
    result = answer(tool, args, timeout=timeout, env=env, redactor=redactor, missing=missing)
    if isinstance(result, NoAnswer):
        return None, result.reason
    if result.rc != 0:
        return None, reason(result)
    try:
        return parse(result.out), ""
    except ValueError as exc:
        return None, str(exc)
