"""The one poll-until-deadline loop: ask, and until the answer is the one wanted or the
deadline has come, sleep and ask again. Every bounded wait of the engine goes through it
(the metrics API, deleted volumes, the package lock, the Docker daemon, Docker Desktop's
first start, a new cluster's API, the release's readiness).

It never sleeps past the deadline: the last sleep is cut to what is left, and the last
look is taken at the deadline, so a wait said to have lasted N seconds did. A caller whose
look is itself bounded by the time left (the readiness wait) passes `at_deadline=False`:
the wait then ends once a whole pause no longer fits, rather than take a look with no time
to answer. A check that raises ends the wait with its exception; a zero (or negative)
timeout looks once.
The clock and the sleep are parameters so that a test runs the loop on fake time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Polled(Generic[T]):
    done: bool  # the check gave a wanted answer before the deadline
    last: T  # the last answer the check gave (the wanted one when done)
    waited: float  # seconds from the first look to the last, on the clock given


def until(
    check: Callable[[], T],
    timeout: float,
    interval: float | Callable[[float], float],
    *,
    done: Callable[[T], bool] = bool,
    at_deadline: bool = True,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Polled[T]:
    """Call `check` until `done(answer)` or `timeout` seconds have passed. `interval` is the
    pause between looks, or a function of the seconds waited so far that gives it."""
    started = clock()
    deadline = started + timeout
    while True:
        answer = check()
        if done(answer):
            return Polled(True, answer, clock() - started)
        now = clock()
        remaining = deadline - now
        if remaining <= 0:
            return Polled(False, answer, now - started)
        pause = interval(now - started) if callable(interval) else interval
        if pause >= remaining and not at_deadline:
            return Polled(False, answer, now - started)
        sleep(min(pause, remaining))
