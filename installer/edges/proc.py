"""The only module that starts processes.

Every call is an argv (never a shell) with a deadline; on expiry the whole process tree is
killed and reaped. Output is bytes, decoded by the caller with `decode`, which never raises.
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Literal

from installer.decide.errors import InstallerError, ToolNotFound, ToolTimeout
from installer.decide.redact import Redactor
from installer.decide.tooling import Tool
from installer.edges import childio, lifetime, process_tree, toolpath
from installer.edges.childio import (
    MAX_STDERR,
    MAX_STDOUT,
    Drain,
    child_environment,
    decode,
    keep_terminal_setup,
    last_line,
)

log = logging.getLogger(__name__)

_WINDOWS = sys.platform.startswith("win")
_NEW_PROCESS_GROUP = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0x200)

# Children still running, so an interrupt can stop them (Ctrl-C does not reach their group).
_live: set[subprocess.Popen[bytes]] = set()
_live_lock = threading.Lock()

# Where a child's stdin/stdout/stderr go when a person must see or answer it: the descriptors
# of their terminal (read, write), or "attached" (the engine's own three, see `run`).
Terminal = tuple[int, int] | Literal["attached"] | None


@dataclass(frozen=True)
class Result:
    argv: tuple[str, ...]
    rc: int
    out: bytes
    err: bytes
    seconds: float

    @property
    def stdout(self) -> str:
        return decode(self.out)

    @property
    def stderr(self) -> str:
        return decode(self.err)


# After the child exits, how long a descendant may hold its pipes open.
DRAIN_S = 1.0

# Told of each child as it starts (pid, argv) and ends (pid, None), for the install lock's
# record (edges/lock.py). No descriptor of ours is inherited (close_fds).
ChildWatcher = Callable[[int, tuple[str, ...] | None], None]
_watchers: list[ChildWatcher] = []


def watch_children(watcher: ChildWatcher) -> None:
    if watcher not in _watchers:
        _watchers.append(watcher)


def unwatch_children(watcher: ChildWatcher) -> None:
    with contextlib.suppress(ValueError):
        _watchers.remove(watcher)


def _tell(pid: int, argv: tuple[str, ...] | None) -> None:
    for watcher in list(_watchers):
        try:
            watcher(pid, argv)
        except Exception:  # noqa: BLE001 - a record is a courtesy; the child runs regardless
            log.debug("child watcher failed", exc_info=True)


# A group granted during this run (docker): `sg GROUP -c 'exec TOOL ARGS…'`, no new login.
_in_group: dict[str, str] = {}


def run_in_group(names: Sequence[str], group: str) -> None:
    for name in names:
        _in_group[name] = group


def _launch(tool: Tool, args: Sequence[str], env: Mapping[str, str]) -> list[str]:
    group = _in_group.get(tool.name)
    if group is None or _WINDOWS:
        return [tool.path, *args]
    sg = toolpath.find_on_path("sg", env, "linux")
    if sg is None:
        return [tool.path, *args]
    import shlex

    return [sg.path, group, "-c", "exec " + shlex.join([tool.path, *args])]


def run(
    tool: Tool,
    args: Sequence[str],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    redactor: Redactor | None = None,
    grace: float = 0.0,
    stdout: IO[bytes] | None = None,
    terminal: Terminal = None,
    keep_terminal: bool = False,
    input: bytes | None = None,
) -> Result:
    """Run `tool args…` and return its result whatever the exit code.

    Raises ToolTimeout after killing the process tree at `timeout`, ToolNotFound when it
    cannot start, InstallerError (before starting) if a known secret is on the command line.
    A descendant holding the output is not waited for beyond DRAIN_S. `grace` > 0: asked to
    stop first (SIGTERM; CTRL_BREAK), killed `grace` s later (helm then marks its release
    failed, not pending). `stdout`: written to that file, `Result.out` empty. `terminal`:
    the person's terminal, in its foreground group, modes restored after; "attached": the
    engine's own three streams (`sudo -v`). `input`: those bytes on stdin, then EOF.
    """
    shown = (tool.name, *args)
    redactor = redactor or Redactor()
    if redactor.leaks(args):
        raise InstallerError(
            f"refusing to run {tool.name}: a secret would appear on its command line",
            "this is a bug in tracebloc-installer; please report it",
        )
    log.debug("run: %s (deadline %gs)", " ".join(shown), timeout)
    started = time.monotonic()
    if terminal == "attached":
        return _run_attached(tool, args, timeout, env, redactor)
    if terminal is not None and not _WINDOWS:
        return _run_on_terminal(tool, args, timeout, env, redactor, terminal)
    session = not _WINDOWS and not keep_terminal
    preexec = lifetime.die_with_parent()
    try:
        child = subprocess.Popen(  # noqa: S603 - argv list, no shell
            _launch(tool, args, env if env is not None else os.environ),
            stdin=subprocess.PIPE
            if input is not None
            else subprocess.DEVNULL
            if terminal is None
            else terminal[0],
            stdout=(subprocess.PIPE if stdout is None else stdout)
            if terminal is None
            else terminal[1],
            stderr=subprocess.PIPE if terminal is None else terminal[1],
            env=child_environment(env if env is not None else os.environ, redactor.secrets),
            # Its own process group (session on POSIX), so the whole tree can be killed.
            start_new_session=session,
            creationflags=_NEW_PROCESS_GROUP if _WINDOWS else 0,
            preexec_fn=keep_terminal_setup(preexec) if keep_terminal and not _WINDOWS else preexec,  # noqa: PLW1509 - see lifetime.py
        )
    except OSError as exc:
        raise ToolNotFound(
            tool.name, f"could not start {tool.path}: {exc.strerror or exc}"
        ) from exc
    job = lifetime.contain(getattr(child, "_handle", None)) if _WINDOWS else None
    _tell(child.pid, shown)
    if input is not None and child.stdin is not None:
        # Written by a thread of its own: a child that reads only after writing (or never)
        # cannot block the deadline below on a full pipe.
        threading.Thread(target=_feed, args=(child.stdin, input), daemon=True).start()
    out = Drain(child.stdout, MAX_STDOUT, keep_last=False)
    err = Drain(child.stderr, MAX_STDERR, keep_last=True)
    with _live_lock:
        _live.add(child)
    try:
        child.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process_tree.stop(child, tool.name, grace, job, (out, err), _kill_tree_windows)
        log.debug("deadline: %s stopped after %gs", tool.name, timeout)
        timed_out = ToolTimeout(shown, timeout)
        timed_out.output = decode(out.data()) + decode(err.data())
        raise timed_out from None
    except BaseException:
        process_tree.stop(child, tool.name, grace, job, (out, err), _kill_tree_windows)
        raise
    finally:
        with _live_lock:
            _live.discard(child)
        _tell(child.pid, None)
    exited = time.monotonic()
    drained = out.wait(DRAIN_S) and err.wait(DRAIN_S - (time.monotonic() - exited))
    if not drained:
        log.debug("%s exited; what it left running still holds its output: stopped", tool.name)
        process_tree.signal_group(child.pid, job)
        out.wait(process_tree.REAP_GRACE_S)
        err.wait(process_tree.REAP_GRACE_S)
    lifetime.release(job)
    elapsed = time.monotonic() - started
    result = Result(shown, child.returncode, out.data(), err.data(), elapsed)
    if child.returncode:
        said = last_line(redactor(result.stderr), child.returncode)
        log.debug("%s: %s in %.2fs", tool.name, said, elapsed)
    else:
        log.debug("exit 0: %s in %.2fs", tool.name, elapsed)
    return result


def _feed(pipe: IO[bytes], data: bytes) -> None:
    """`data` into the child's stdin, then end of file; a child that exits first is fine."""
    try:
        pipe.write(data)
    except OSError:  # BrokenPipeError: the child did not read it all
        pass
    finally:
        with contextlib.suppress(OSError):
            pipe.close()


def _run_attached(
    tool: Tool,
    args: Sequence[str],
    timeout: float,
    env: Mapping[str, str] | None,
    redactor: Redactor,
) -> Result:
    """`run(terminal="attached")`: nothing is captured; the result holds the exit code. On
    the controlling terminal as `_run_on_terminal` is: its modes restored after (a sudo
    killed while asking must not leave echo off), a Ctrl-C waited out for ON_TERMINAL_GRACE_S."""
    started = time.monotonic()
    tty = _controlling_terminal()
    try:
        with childio.on_terminal(tty) if tty is not None else contextlib.nullcontext():
            try:
                child = subprocess.Popen(  # noqa: S603 - argv list, no shell
                    [tool.path, *args],
                    env=child_environment(env if env is not None else os.environ, redactor.secrets),
                )
            except OSError as exc:
                raise ToolNotFound(
                    tool.name, f"could not start {tool.path}: {exc.strerror or exc}"
                ) from exc
            try:
                rc = child.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                process_tree.end(child, 0.0)
                raise ToolTimeout((tool.name, *args), timeout) from None
            except BaseException:
                process_tree.end(child, ON_TERMINAL_GRACE_S)
                raise
    finally:
        if tty is not None:
            os.close(tty)
    return Result((tool.name, *args), rc, b"", b"", time.monotonic() - started)


def _controlling_terminal() -> int | None:
    """The engine's controlling terminal, opened for its modes; None without one."""
    if _WINDOWS:
        return None
    try:
        return os.open(
            "/dev/tty", os.O_RDWR | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
        )
    except OSError:
        return None


# After the terminal's Ctrl-C, how long a child on it has to end by itself (then SIGTERM,
# then a kill a second later).
ON_TERMINAL_GRACE_S = 5.0


def _run_on_terminal(
    tool: Tool,
    args: Sequence[str],
    timeout: float,
    env: Mapping[str, str] | None,
    redactor: Redactor,
    terminal: tuple[int, int],
) -> Result:
    """`run(terminal=(read, write))` on POSIX: the engine's group is the terminal's foreground
    meanwhile, so a Ctrl-C reaches both; the engine waits for the child (ON_TERMINAL_GRACE_S at
    most), restores the terminal modes and stops with KeyboardInterrupt."""
    shown = (tool.name, *args)
    started = time.monotonic()
    with childio.on_terminal(terminal[0]):
        try:
            child = subprocess.Popen(  # noqa: S603 - argv list, no shell
                _launch(tool, args, env if env is not None else os.environ),
                stdin=terminal[0],
                stdout=terminal[1],
                stderr=terminal[1],
                env=child_environment(env if env is not None else os.environ, redactor.secrets),
                preexec_fn=lifetime.die_with_parent(),  # noqa: PLW1509 - see lifetime.py
            )
        except OSError as exc:
            raise ToolNotFound(
                tool.name, f"could not start {tool.path}: {exc.strerror or exc}"
            ) from exc
        _tell(child.pid, shown)
        try:
            rc = child.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process_tree.end(child, 0.0)
            raise ToolTimeout(shown, timeout) from None
        except BaseException:  # Ctrl-C (the child got it too), SIGTERM, SIGHUP
            process_tree.end(child, ON_TERMINAL_GRACE_S)
            raise
        finally:
            _tell(child.pid, None)
    return Result(shown, rc, b"", b"", time.monotonic() - started)


def terminate_all() -> None:
    """Kill every child still running (on Ctrl-C); the threads waiting on them then reap."""
    with _live_lock:
        children = list(_live)
    for child in children:
        process_tree.signal_tree(child, _kill_tree_windows)


def taskkill_path(env: Mapping[str, str]) -> str:
    """Windows' own taskkill, by its absolute path: a bare name would run a taskkill.exe in
    the program's or the current directory first."""
    root = env.get("SystemRoot") or env.get("SYSTEMROOT") or r"C:\Windows"
    return root.rstrip("\\/") + r"\System32\taskkill.exe"


def _kill_tree_windows(pid: int) -> None:
    # taskkill /T walks the tree by parent pid, which is how Windows records descendants.
    try:
        subprocess.run(  # noqa: S603
            [taskkill_path(os.environ), "/F", "/T", "/PID", str(pid)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=process_tree.REAP_GRACE_S * 2,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        pass
