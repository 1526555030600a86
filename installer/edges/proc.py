"""The only module that starts processes.

Every kubectl/helm/nvidia-smi call is an argv list (never a shell) run with a process-level
deadline; on expiry the child's whole process tree is killed and reaped, so a wedged tool
cannot outlive its deadline. Output is captured as bytes and decoded by the caller with
`decode`, which never raises.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from installer.decide.errors import InstallerError, ToolNotFound, ToolTimeout
from installer.decide.model import os_name as model_os_name
from installer.present.redact import Redactor

log = logging.getLogger(__name__)

# After the kill, how long to wait for the pipes to drain before giving up on them.
REAP_GRACE_S = 2.0
_WINDOWS = sys.platform.startswith("win")
_NEW_PROCESS_GROUP = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0x200)

# Children still running, so an interrupt can stop them: they run in their own process
# group, where the terminal's Ctrl-C does not reach them.
_live: set[subprocess.Popen[bytes]] = set()
_live_lock = threading.Lock()


@dataclass(frozen=True)
class Tool:
    """`name` is what plans and logs show ("helm"); `path` is the executable actually run."""

    name: str
    path: str


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


def decode(data: bytes | None) -> str:
    """Bytes from a tool as text: UTF-8 (BOM tolerated), undecodable bytes replaced."""
    if not data:
        return ""
    return data.decode("utf-8-sig", errors="replace")


def last_line(text: str, rc: int) -> str:
    """A tool's failure in one line: its exit code and the last thing it said."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return f"exit {rc}: {lines[-1][:300]}" if lines else f"exit {rc} with no message"


def find_tool(name: str, env: Mapping[str, str], os_name: str | None = None) -> Tool:
    """Locate `name`: `TRACEBLOC_<NAME>` when set, else the first match on PATH.

    Raises ToolNotFound; callers that only probe turn that into a reported fact.
    """
    os_name = os_name or model_os_name(sys.platform)
    variable = tool_variable(name)
    explicit = env.get(variable, "").strip()
    if explicit:
        if _is_executable(explicit, os_name):
            return Tool(name, explicit)
        raise ToolNotFound(name, f"{variable} names {explicit!r}, which is not an executable file")
    separator = ";" if os_name == "windows" else ":"
    exe = name + ".exe" if os_name == "windows" and not name.endswith(".exe") else name
    for directory in env.get("PATH", "").split(separator):
        if directory:
            candidate = os.path.join(directory.strip('"'), exe)
            if _is_executable(candidate, os_name):
                return Tool(name, candidate)
    raise ToolNotFound(name, f"install {name}, or name its binary with {variable}")


def tool_variable(name: str) -> str:
    """The variable naming an explicit binary: TRACEBLOC_KUBECTL, TRACEBLOC_NVIDIA_SMI, …"""
    return "TRACEBLOC_" + name.upper().replace("-", "_")


def _is_executable(path: str, os_name: str) -> bool:
    if not os.path.isfile(path):
        return False
    return os_name == "windows" or os.access(path, os.X_OK)


def child_env(env: Mapping[str, str], frozen: bool | None = None) -> dict[str, str]:
    """The environment for a child process.

    A PyInstaller binary on Linux points LD_LIBRARY_PATH at its own bundled libraries and
    keeps the user's in LD_LIBRARY_PATH_ORIG (absent when they had none); a system helm or
    kubectl must see the user's, or it may load our copies of libc-adjacent libraries.
    On macOS the bootloader leaves DYLD_LIBRARY_PATH alone and writes no _ORIG, so what is
    there is the user's own and passes unchanged; only an _ORIG (an older bootloader's) is
    put back.
    """
    out = dict(env)
    if frozen if frozen is not None else getattr(sys, "frozen", False):
        original = out.pop("LD_LIBRARY_PATH_ORIG", None)
        if original is not None:
            out["LD_LIBRARY_PATH"] = original
        else:
            out.pop("LD_LIBRARY_PATH", None)
        dyld = out.pop("DYLD_LIBRARY_PATH_ORIG", None)
        if dyld is not None:
            out["DYLD_LIBRARY_PATH"] = dyld
    return out


def run(
    tool: Tool,
    args: Sequence[str],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    redactor: Redactor | None = None,
    grace: float = 0.0,
) -> Result:
    """Run `tool args…` and return its result whatever the exit code.

    Raises ToolTimeout after killing the process tree when `timeout` expires, ToolNotFound
    when the executable cannot be started, and InstallerError before starting anything if
    a known secret would appear in the argv.

    With `grace` > 0 the child is first asked to stop (SIGTERM; CTRL_BREAK on Windows) at
    the deadline or on Ctrl-C, and killed only if it is still running `grace` seconds
    later: helm, asked, marks its release failed instead of leaving it pending.
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
    try:
        child = subprocess.Popen(  # noqa: S603 - argv list, no shell
            [tool.path, *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=child_env(env if env is not None else os.environ),
            # Its own process group (session on POSIX), so the whole tree can be killed.
            start_new_session=not _WINDOWS,
            creationflags=_NEW_PROCESS_GROUP if _WINDOWS else 0,
        )
    except OSError as exc:
        raise ToolNotFound(
            tool.name, f"could not start {tool.path}: {exc.strerror or exc}"
        ) from exc
    with _live_lock:
        _live.add(child)
    try:
        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        out, err = _stop(child, tool.name, grace)
        log.debug("deadline: %s stopped after %gs", tool.name, timeout)
        timed_out = ToolTimeout(shown, timeout)
        timed_out.output = decode(out) + decode(err)
        raise timed_out from None
    except BaseException:
        _stop(child, tool.name, grace)
        raise
    finally:
        with _live_lock:
            _live.discard(child)
    elapsed = time.monotonic() - started
    if child.returncode:
        said = last_line(decode(err), child.returncode)
        log.debug("%s: %s in %.2fs", tool.name, redactor(said), elapsed)
    else:
        log.debug("exit 0: %s in %.2fs", tool.name, elapsed)
    return Result(shown, child.returncode, out or b"", err or b"", elapsed)


def _stop(child: subprocess.Popen[bytes], name: str, grace: float) -> tuple[bytes, bytes]:
    """Ask first when there is a grace period, then kill the tree; returns what the child
    said while stopping. A second Ctrl-C during the grace period skips to the kill."""
    out = err = b""
    try:
        if grace > 0 and child.poll() is None:
            _ask_to_stop(child)
            log.debug("asked %s (pid %s) to stop; killing it in %gs", name, child.pid, grace)
            try:
                # communicate, not wait: a child blocked on a full pipe could never exit.
                out, err = child.communicate(timeout=grace)
            except subprocess.TimeoutExpired:
                log.debug("%s did not stop within %gs", name, grace)
            except (ValueError, OSError):
                pass
    except KeyboardInterrupt:
        _kill_tree(child)
        raise
    late_out, late_err = _kill_tree(child)
    # communicate() keeps what it read before a timeout and returns all of it at the end.
    return (out or late_out), (err or late_err)


def _ask_to_stop(child: subprocess.Popen[bytes]) -> None:
    try:
        if _WINDOWS:
            # Delivered to the child's process group (CREATE_NEW_PROCESS_GROUP above).
            child.send_signal(getattr(signal, "CTRL_BREAK_EVENT", signal.SIGTERM))
        else:
            child.send_signal(signal.SIGTERM)
    except OSError:
        pass


def terminate_all() -> None:
    """Kill every child still running (on Ctrl-C); the threads waiting on them then reap."""
    with _live_lock:
        children = list(_live)
    for child in children:
        _signal_tree(child)


def _signal_tree(child: subprocess.Popen[bytes]) -> None:
    """Kill the child and everything it started. Never raises."""
    if _WINDOWS:
        _kill_tree_windows(child.pid)
    else:
        _kill_group(child.pid)
    try:
        child.kill()
    except OSError:
        pass


def _kill_tree(child: subprocess.Popen[bytes]) -> tuple[bytes, bytes]:
    """Kill the child's tree, then reap it; returns what it had still to say. Never raises."""
    _signal_tree(child)
    try:
        out, err = child.communicate(timeout=REAP_GRACE_S)
        return out or b"", err or b""
    except (subprocess.TimeoutExpired, ValueError, OSError):
        # A grandchild that escaped the group may still hold a pipe open; stop reading it.
        for stream in (child.stdout, child.stderr):
            if stream is not None:
                stream.close()
        try:
            child.wait(timeout=REAP_GRACE_S)
        except subprocess.TimeoutExpired:
            pass
    return b"", b""


def _kill_group(pid: int) -> None:
    # The child leads its own session, so its group id is its pid.
    if sys.platform != "win32":
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass


def _kill_tree_windows(pid: int) -> None:
    # taskkill /T walks the tree by parent pid, which is how Windows records descendants.
    try:
        subprocess.run(  # noqa: S603
            ["taskkill", "/F", "/T", "/PID", str(pid)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=REAP_GRACE_S * 2,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        pass
