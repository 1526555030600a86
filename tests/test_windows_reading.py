"""What Windows runs and reads back, checked on any OS: taskkill from System32 by its
absolute path, and PowerShell's single-quoted strings read back as the argv they quote,
for every character PowerShell's tokenizer treats as a single quote."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from installer.decide import shellquote
from installer.edges import proc

# PowerShell's tokenizer (CharExtensions.IsSingleQuote): these five open, close and, doubled,
# escape a single-quoted string.
POWERSHELL_SINGLE_QUOTES = "'\u2018\u2019\u201a\u201b"


def powershell_words(line: str) -> list[str]:
    """`line` split as PowerShell's tokenizer splits command arguments, for what
    shellquote.powershell writes: bare words, and single-quoted strings where a quote
    followed by any quote stands for the second one (Tokenizer.ScanStringLiteral)."""
    words: list[str] = []
    i = 0
    while i < len(line):
        if line[i] == " ":
            i += 1
            continue
        if line[i] in POWERSHELL_SINGLE_QUOTES:
            i += 1
            word = []
            while True:
                assert i < len(line), f"unterminated string in {line!r}"
                c = line[i]
                i += 1
                if c in POWERSHELL_SINGLE_QUOTES:
                    if i < len(line) and line[i] in POWERSHELL_SINGLE_QUOTES:
                        c = line[i]
                        i += 1
                    else:
                        break
                word.append(c)
            assert i == len(line) or line[i] == " ", f"a string ends mid-word in {line!r}"
            words.append("".join(word))
            continue
        end = line.find(" ", i)
        end = len(line) if end < 0 else end
        bare = line[i:end]
        assert not any(q in bare for q in POWERSHELL_SINGLE_QUOTES), bare
        words.append(bare)
        i = end
    return words


quotes_and_text = st.text(
    alphabet=st.sampled_from(POWERSHELL_SINGLE_QUOTES + 'ab $`";&|()@#%\u00e9')
)


@given(st.lists(st.one_of(quotes_and_text, st.text()), min_size=1))
def test_every_argument_reads_back_in_powershell_whatever_quotes_it_holds(argv: list[str]) -> None:
    line = shellquote.join(argv, windows=True)
    assert powershell_words(line) == argv


@pytest.mark.parametrize("quote", list(POWERSHELL_SINGLE_QUOTES))
def test_a_pasted_curly_quote_cannot_end_the_string(quote: str) -> None:
    part = f"x{quote}; Remove-Item -Recurse C:\\ ;{quote}"
    line = shellquote.powershell(part)
    assert powershell_words(line) == [part]
    assert line[1:-1].count(quote) == 4  # each doubled


def test_taskkill_is_started_from_system32_by_its_absolute_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ran: list[list[str]] = []

    def fake_run(argv: list[str], **_: Any) -> subprocess.CompletedProcess[bytes]:
        ran.append(argv)
        return subprocess.CompletedProcess(argv, 0)

    monkeypatch.setattr(proc.subprocess, "run", fake_run)
    monkeypatch.setenv("SystemRoot", "D:\\Win")
    proc._kill_tree_windows(4242)
    assert ran == [["D:\\Win\\System32\\taskkill.exe", "/F", "/T", "/PID", "4242"]]
    assert proc.taskkill_path({}) == "C:\\Windows\\System32\\taskkill.exe"
