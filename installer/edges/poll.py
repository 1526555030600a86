"""The one poll-until-deadline loop: every bounded wait of the engine goes through it.

It never sleeps past the deadline and takes its last look at it, so a wait said to have
lasted N seconds did; `at_deadline=False` ends instead once a whole pause no longer fits.
A raising check ends the wait; a timeout <= 0 looks once. Clock and sleep are parameters.
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
