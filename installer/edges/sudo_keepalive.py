"""While the privileged flow runs, the sudo ticket is refreshed (`sudo -n -v`, never a
prompt) every 50 s, so a long package install does not leave the next root step without
it. Each refresh is bounded; it stops with the flow, at the first failure, or with the
engine (a daemon thread).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from installer.edges import call, toolpath

INTERVAL_S = 50.0
CALL_TIMEOUT_S = 10.0


@contextmanager
def keepalive(
    env: Mapping[str, str], *, interval: float = INTERVAL_S, call_timeout: float = CALL_TIMEOUT_S
) -> Iterator[None]:
    sudo = toolpath.find_on_path("sudo", env, "linux")
    if sudo is None:
        yield
        return
    stop = threading.Event()

    def refresh() -> None:
        while not stop.wait(interval):
            result = call.answer(
                sudo, ["-n", "-v"], timeout=call_timeout, env=env, keep_terminal=True
            )
            if isinstance(result, call.NoAnswer) or result.rc != 0:
                return

    thread = threading.Thread(target=refresh, name="sudo-keepalive", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=call_timeout + 1)
