"""The one reading of a typed y/N answer (decide/yesno.answer) and the one way every y/N
question is asked (commands/asking.agree)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import installer
from installer.commands.asking import agree
from installer.decide import yesno


@pytest.mark.parametrize("typed", ["y", "Y", "yes", "YES", "Yes", " y ", "yes\t", "\ty"])
@pytest.mark.parametrize("default", [False, True])
def test_y_or_yes_in_any_case_is_yes_whatever_the_default(typed: str, default: bool) -> None:
    assert yesno.answer(typed, default=default) is True


@pytest.mark.parametrize("typed", ["", " ", "\t", "  \t "])
@pytest.mark.parametrize("default", [False, True])
def test_an_empty_answer_is_the_questions_default(typed: str, default: bool) -> None:
    assert yesno.answer(typed, default=default) is default


@pytest.mark.parametrize(
    "typed",
    [
        pytest.param("n", id="n"),
        pytest.param("no", id="no"),
        pytest.param("N", id="capital-n"),
        pytest.param("ye", id="a-typo"),
        pytest.param("yes please", id="more-than-yes"),
        pytest.param("yy", id="doubled"),
        pytest.param("1", id="a-variables-true"),
        pytest.param("true", id="a-variables-true-word"),
        pytest.param("oui", id="another-language"),
        pytest.param("y\x1b[A", id="an-escape-sequence"),
    ],
)
def test_anything_else_typed_is_no_even_where_the_default_is_yes(typed: str) -> None:
    assert yesno.answer(typed, default=True) is False
    assert yesno.answer(typed, default=False) is False


@given(st.text())
def test_only_y_or_yes_or_an_empty_line_can_be_a_yes(typed: str) -> None:
    said = typed.strip().lower()
    assert yesno.answer(typed, default=False) is (said in ("y", "yes"))
    assert yesno.answer(typed, default=True) is (said in ("y", "yes", ""))


class Person:
    def __init__(self, *typed: str | BaseException) -> None:
        self.typed = list(typed)
        self.prompts: list[str] = []

    def ask(self, prompt: str) -> str:
        self.prompts.append(prompt)
        said = self.typed.pop(0)
        if isinstance(said, BaseException):
            raise said
        return said


@pytest.mark.parametrize(
    ("default", "prompt"), [(False, "Install? [y/N] "), (True, "Install? [Y/n] ")]
)
def test_the_prompt_shows_the_default_the_answer_is_read_with(default: bool, prompt: str) -> None:
    person = Person("")
    assert agree(person.ask, "Install?", default=default) is default
    assert person.prompts == [prompt]


@pytest.mark.parametrize(
    "gone",
    [
        pytest.param(EOFError(), id="end-of-input"),
        pytest.param(OSError("EIO"), id="terminal-unreadable"),
    ],
)
@pytest.mark.parametrize("default", [False, True])
def test_nobody_answering_is_never_a_yes(gone: BaseException, default: bool) -> None:
    assert agree(Person(gone).ask, "Proceed?", default=default) is False


def test_ctrl_c_at_a_question_is_not_swallowed() -> None:
    with pytest.raises(KeyboardInterrupt):
        agree(Person(KeyboardInterrupt()).ask, "Remove these?")


# --- every y/N question goes through agree ----------------------------------------------

ROOT = Path(installer.__file__).parent


def _strings(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [s for element in node.elts for s in _strings(element)]
    return []


def _modules() -> list[tuple[str, ast.Module]]:
    return [
        (str(p.relative_to(ROOT)), ast.parse(p.read_text(encoding="utf-8")))
        for p in sorted(ROOT.rglob("*.py"))
    ]


def test_no_module_but_yesno_compares_an_answer_with_y() -> None:
    # "y" alone is only ever a typed answer ("yes" is also a value of yes/no variables).
    found = []
    for name, tree in _modules():
        if name == "decide/yesno.py":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):
                said = [
                    s.strip().lower()
                    for part in (node.left, *node.comparators)
                    for s in _strings(part)
                ]
                if "y" in said:
                    found.append(f"{name}:{node.lineno}")
    assert found == []


def test_no_module_but_asking_writes_a_y_n_prompt_of_its_own() -> None:
    found = []
    for name, tree in _modules():
        if name == "commands/asking.py":
            continue
        docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docstrings
                and ("[y/N]" in node.value or "[Y/n]" in node.value)
            ):
                found.append(f"{name}:{node.lineno}")
    assert found == []
