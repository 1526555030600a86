"""Ending a child and everything it started: ask it to stop (SIGTERM, or CTRL_BREAK on
Windows), wait, then kill its group (its job object and `windows_kill`, proc's `taskkill /T`,
on Windows) and reap it. Nothing here raises but a second Ctrl-C, after the kill."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Callable

from installer.edges import lifetime
from installer.edges.childio import Drain

log = logging.getLogger("installer.edges.proc")

# After the kill, how long to wait for the pipes to drain before giving up on them.
REAP_GRACE_S = 2.0
WINDOWS = sys.platform.startswith("win")


def end(child: subprocess.Popen[bytes], grace: float) -> None:
    """Let the child end by itself within `grace`, then ask it (SIGTERM), then kill it; a
    second Ctrl-C skips to the kill. Never raises but that Ctrl-C, after the kill."""
    try:
        for stop, wait in ((None, grace), (signal.SIGTERM, 1.0)):
            if stop is not None and child.poll() is None:
                with contextlib.suppress(OSError):
                    child.send_signal(stop)
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=wait)
                return
    except KeyboardInterrupt:
        kill_and_reap(child)
        raise
    kill_and_reap(child)


def kill_and_reap(child: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        child.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        child.wait(timeout=REAP_GRACE_S)


def stop(
    child: subprocess.Popen[bytes],
    name: str,
    grace: float,
    job: int | None,
    drains: tuple[Drain, Drain],
    windows_kill: Callable[[int], None],
) -> None:
    """Ask first when there is a grace period, then kill the tree. The drains keep reading
    meanwhile, so a child blocked on a full pipe can still exit. A second Ctrl-C during the
    grace period skips to the kill."""
    try:
        if grace > 0 and child.poll() is None:
            ask_to_stop(child)
            log.debug("asked %s (pid %s) to stop; killing it in %gs", name, child.pid, grace)
            try:
                child.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                log.debug("%s did not stop within %gs", name, grace)
    except KeyboardInterrupt:
        kill_tree(child, job, drains, windows_kill)
        raise
    kill_tree(child, job, drains, windows_kill)


def ask_to_stop(child: subprocess.Popen[bytes]) -> None:
    try:
        if WINDOWS:
            # Delivered to the child's process group (CREATE_NEW_PROCESS_GROUP above).
            child.send_signal(getattr(signal, "CTRL_BREAK_EVENT", signal.SIGTERM))
        else:
            child.send_signal(signal.SIGTERM)
    except OSError:
        pass


def signal_tree(child: subprocess.Popen[bytes], windows_kill: Callable[[int], None]) -> None:
    """Kill the child and everything it started. Never raises."""
    if WINDOWS:
        windows_kill(child.pid)
    else:
        kill_group(child.pid)
    try:
        child.kill()
    except OSError:
        pass


def signal_group(pid: int, job: int | None) -> None:
    """Kill what a child that has exited left running in its group (job on Windows)."""
    if WINDOWS:
        lifetime.kill_job(job)
    else:
        kill_group(pid)


def kill_tree(
    child: subprocess.Popen[bytes],
    job: int | None,
    drains: tuple[Drain, ...],
    windows_kill: Callable[[int], None],
) -> None:
    """Kill the child's tree, reap it, and let the pipes drain briefly. Never raises.

    A grandchild that escaped the group may still hold a pipe: it is not waited for."""
    lifetime.kill_job(job)
    signal_tree(child, windows_kill)
    try:
        child.wait(timeout=REAP_GRACE_S)
    except subprocess.TimeoutExpired:
        pass
    for drain in drains:
        drain.wait(REAP_GRACE_S)
    lifetime.release(job)


def kill_group(pid: int) -> None:
    # The child leads its own session, so its group id is its pid.
    if sys.platform != "win32":
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
