"""The one poll-until-deadline loop (installer/edges/poll.py), on fake time."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from installer.edges import poll


class FakeTime:
    """A clock that moves only when slept on (plus what each look costs)."""

    def __init__(self, look_costs: float = 0.0) -> None:
        self.now = 500.0
        self.slept: list[float] = []
        self.look_costs = look_costs

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0
        self.slept.append(seconds)
        self.now += seconds

    def answers(self, *said: object) -> Callable[[], object]:
        """A check giving `said` in turn (the last one for ever), each look costing time."""
        queue = list(said)

        def check() -> object:
            self.now += self.look_costs
            return queue.pop(0) if len(queue) > 1 else queue[0]

        return check


def test_a_wait_that_never_succeeds_sleeps_up_to_the_deadline_and_no_further() -> None:
    t = FakeTime()
    got = poll.until(t.answers(False), 10, 3, clock=t.clock, sleep=t.sleep)
    assert got == poll.Polled(False, False, 10.0)
    assert t.slept == [3, 3, 3, 1]  # the last pause is cut to what is left
    assert t.now == 510.0


def test_slow_looks_count_against_the_deadline() -> None:
    t = FakeTime(look_costs=2.0)
    got = poll.until(t.answers(False), 5, 2, clock=t.clock, sleep=t.sleep)
    assert not got.done
    assert t.slept == [2]  # looks end at 502 and at 506: past the deadline, no more sleep
    assert got.waited == 6.0


def test_the_wait_ends_at_the_first_wanted_answer() -> None:
    t = FakeTime()
    got = poll.until(
        t.answers(None, None, "up", "later"),
        60,
        5,
        done=lambda a: a is not None,
        clock=t.clock,
        sleep=t.sleep,
    )
    assert got == poll.Polled(True, "up", 10.0)
    assert t.slept == [5, 5]


def test_an_answer_at_once_does_not_sleep() -> None:
    got = poll.until(lambda: True, 600, 5, clock=lambda: 0.0, sleep=lambda s: pytest.fail("slept"))
    assert got == poll.Polled(True, True, 0.0)


@pytest.mark.parametrize("timeout", [pytest.param(0, id="zero"), pytest.param(-3, id="negative")])
def test_no_time_at_all_looks_once(timeout: float) -> None:
    looks: list[int] = []

    def check() -> list[str]:
        looks.append(1)
        return ["still there"]

    got = poll.until(
        check,
        timeout,
        1,
        done=lambda left: not left,
        clock=lambda: 0.0,
        sleep=lambda s: pytest.fail("slept"),
    )
    assert looks == [1]
    assert got == poll.Polled(False, ["still there"], 0.0)


def test_a_check_that_raises_ends_the_wait_with_its_exception() -> None:
    t = FakeTime()
    looks = [0]

    def check() -> bool:
        looks[0] += 1
        if looks[0] == 3:
            raise KeyError("gone")
        return False

    with pytest.raises(KeyError, match="gone"):
        poll.until(check, 60, 1, clock=t.clock, sleep=t.sleep)
    assert t.slept == [1, 1]


def test_an_interval_that_grows_with_the_wait_is_asked_each_time() -> None:
    t = FakeTime()
    asked: list[float] = []

    def interval(waited: float) -> float:
        asked.append(waited)
        return 1.0 if waited < 3 else 4.0

    got = poll.until(t.answers(False), 12, interval, clock=t.clock, sleep=t.sleep)
    assert not got.done
    assert asked == [0, 1, 2, 3, 7, 11]
    assert t.slept == [1, 1, 1, 4, 4, 1]


def test_a_wait_without_a_look_at_the_deadline_ends_when_a_whole_pause_no_longer_fits() -> None:
    t = FakeTime()
    got = poll.until(t.answers(False), 10, 3, at_deadline=False, clock=t.clock, sleep=t.sleep)
    assert t.slept == [3, 3, 3]  # looks at 0, 3, 6, 9: 1s is left, less than a pause
    assert got == poll.Polled(False, False, 9.0)


def test_a_pause_that_ends_exactly_at_the_deadline_is_not_taken_without_a_look_there() -> None:
    t = FakeTime()
    poll.until(t.answers(False), 9, 3, at_deadline=False, clock=t.clock, sleep=t.sleep)
    assert t.slept == [3, 3]


def test_no_time_at_all_looks_once_without_a_look_at_the_deadline_too() -> None:
    looks: list[int] = []
    got = poll.until(
        lambda: looks.append(1),
        0,
        1,
        at_deadline=False,
        clock=lambda: 0.0,
        sleep=lambda s: pytest.fail("slept"),
    )
    assert looks == [1] and not got.done


# --- every bounded wait goes through it -------------------------------------------------


def test_no_module_but_poll_sleeps_inside_a_loop_of_its_own() -> None:
    import ast

    import installer

    root = Path(installer.__file__).parent
    loops = []
    for path in sorted(root.rglob("*.py")):
        if path == root / "edges" / "poll.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.While, ast.For)):
                continue
            for call in ast.walk(node):
                if isinstance(call, ast.Call) and (
                    getattr(call.func, "id", None) == "sleep"
                    or getattr(call.func, "attr", None) == "sleep"
                ):
                    loops.append(f"{path.relative_to(root)}:{node.lineno}")
    assert loops == []


def test_a_new_clusters_api_that_never_answers_is_looked_at_once_with_no_wait(
    tmp_path: Path,
) -> None:
    import dataclasses
    import io
    import json

    from installer.commands import localcluster_create
    from installer.decide import localcluster as lc
    from installer.decide.errors import InstallerError
    from installer.decide.redact import Redactor
    from installer.edges import toolpath
    from installer.present.ui import Ui
    from tests.fakes.executables import make_executable

    calls = tmp_path / "calls"
    make_executable(
        tmp_path / "kubectl",
        "import json, sys\n"
        f"open({str(calls)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
        "sys.exit(1)\n",
    )
    env = {"PATH": str(tmp_path)}
    s = dataclasses.replace(lc.settings({}), api_wait_s=0)
    with pytest.raises(InstallerError, match="its API did not answer within 0s"):
        localcluster_create.wait_for_api(
            s,
            env,
            Ui(io.StringIO(), env={}, redactor=Redactor()),
            Redactor(),
            toolpath.find_tool("kubectl", env),
        )
    assert [json.loads(line) for line in calls.read_text().splitlines()] == [lc.api_wait_args()]
