"""The redactor: the password in every form a tool prints it is masked; a name that merely
contains it is not; the leak guard stops a password passed as a value, not a name."""

from __future__ import annotations

import json
import re
import urllib.parse

import pytest
import yaml
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from installer.decide.model import Connection
from installer.decide.redact import MASK, Redactor
from installer.edges import helm

# Passwords a person may choose: any text, but at least a few characters that are letters or
# digits, so that "leaves no fragment" has a fragment to look for.
passwords = st.text(min_size=6, max_size=40).filter(
    lambda p: sum(c.isalnum() for c in p) >= 6 and p.strip() == p
)


TEMPLATE_WORDS = ("clientPassword", "password", "rejected", "Error", "proxy", "http", "query")


def printed(password: str) -> list[str]:
    """What tools print for a value: as is, JSON, YAML, Go-ish quoted, percent-encoded."""
    dumped = yaml.safe_dump({"clientPassword": password}, width=1 << 30, allow_unicode=True)
    return [
        f"Error: password {password} rejected",
        f'{{"clientPassword": {json.dumps(password)}}}',
        f'{{"clientPassword": {json.dumps(password, ensure_ascii=False)}}}',
        dumped,
        f"proxy http://u:{urllib.parse.quote(password, safe='')}@proxy:3128",
        f"query ?password={urllib.parse.quote_plus(password)}&x=1",
        f"Error: password {password}.",
    ]


@settings(max_examples=150, deadline=None)
@given(password=passwords)
def test_every_printed_form_is_masked(password: str) -> None:
    redact = Redactor([password])
    for text in printed(password):
        shown = redact(text)
        assert MASK in shown, (text, shown)
        # The tools' own words may contain the password ('client' in 'clientPassword'): what
        # must not show is the value, so those words are taken out before looking for it.
        rest = shown
        for word in TEMPLATE_WORDS:
            rest = rest.replace(word, "\0")
        assert password not in rest, (text, shown)


@settings(max_examples=150, deadline=None)
@given(password=passwords, keep=st.integers(min_value=3, max_value=39))
def test_a_password_cut_short_leaves_no_fragment(password: str, keep: int) -> None:
    cut = password[: min(keep, len(password) - 1)]
    # The password's first word alone is the one cut not masked (it may be a tool's name:
    # see test_the_first_word_of_a_password_is_not_taken_for_the_password_cut_short).
    word = re.match(r"\w+", password)
    assume(
        not (
            word
            and cut == word.group()
            and not password[len(cut)].isalnum()
            and password[len(cut)] != "_"
        )
    )
    redact = Redactor([password])
    for prefix, suffix in (
        ("Error: password ", "…"),
        ("Error: password ", "\nnext line"),
        ("clientPassword: ", ""),
    ):
        shown = redact(prefix + cut + suffix).replace(MASK, "")
        # The fragment may also be part of the tool's own words (cut 'cli' of 'cli000' in
        # 'clientPassword'): only what follows them is the printed value.
        rest = shown[len(prefix) :] if shown.startswith(prefix) else shown
        assert cut not in rest, (prefix + cut + suffix, shown)


@pytest.mark.parametrize("password", [" hunter2 ", "\thunter2\n"])
def test_whitespace_around_the_password_is_not_needed_to_mask_it(password: str) -> None:
    assert Redactor([password])("pw: hunter2, ok") == f"pw: {MASK}, ok"


@pytest.mark.parametrize(
    ("password", "text"),
    [
        pytest.param("client", "The chart tracebloc/client, clients, subclient", id="client"),
        pytest.param("values", "helm --values /home/me/.tracebloc/values.yaml", id="values"),
        pytest.param("tracebloc", "~/.tracebloc/install.log, tracebloc/client", id="tracebloc"),
        pytest.param("install", "helm upgrade --install; installed; reinstall", id="install"),
        pytest.param("a", "a-b values.yaml cat", id="one-letter"),
    ],
)
def test_a_name_that_contains_the_password_is_not_garbled(password: str, text: str) -> None:
    assert Redactor([password])(text) == text


@pytest.mark.parametrize(
    ("password", "text", "shown"),
    [
        pytest.param(
            "client", "password client rejected", f"password {MASK} rejected", id="standalone-word"
        ),
        pytest.param("s3cret", "token=s3cret&x", f"token={MASK}&x", id="query-value"),
        pytest.param("s3cret", "'s3cret'", f"'{MASK}'", id="quoted"),
    ],
)
def test_the_password_as_a_token_is_masked(password: str, text: str, shown: str) -> None:
    assert Redactor([password])(text) == shown


@settings(deadline=None)
@given(
    password=st.text(min_size=1, max_size=30).filter(str.strip),
    release=st.from_regex(r"[a-z][a-z0-9-]{0,20}", fullmatch=True),
)
def test_the_engines_own_argv_never_trips_the_guard(password: str, release: str) -> None:
    # Whatever the password, even equal to the release, namespace or a path's name.
    redact = Redactor([password, release, "values", "client", "tracebloc"])
    for conn in (Connection(), Connection(kubeconfig=f"/h/{password}/kube", context=password)):
        argv = helm.upgrade_install_args(
            release, "tracebloc/client", release, f"/home/{password}/values.yaml", conn
        )
        assert not redact.leaks(argv)
        assert not redact.leaks(helm.list_args(conn))


@settings(deadline=None)
@given(password=st.text(min_size=1, max_size=30).filter(lambda p: "," not in p))
def test_a_password_passed_as_a_value_is_refused(password: str) -> None:
    redact = Redactor([password])
    assert redact.leaks(["upgrade", "--set", f"clientPassword={password}"])
    assert redact.leaks(["upgrade", "--set-string", f"x={password}"])
    assert redact.leaks(["registry", "login", "--password", password])
    assert redact.leaks(["login", f"--password={password}"])
    if (
        not set(password) & set("/?#@ \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0")
        and password.isprintable()
    ):
        assert redact.leaks(["repo", "add", "r", f"https://u:{password}@charts.example"])


# --- a secret of any length ------------------------------------------------------------------


def _cut_by_alternation(form: str, text: str) -> list[tuple[int, int]]:
    """The matcher the redactor used to build, one alternative per prefix (quadratic in the
    form's length): the reference the linear one must agree with."""
    import re

    from installer.decide.redact import _first_word

    least = max(1, min(3, len(form) - 1))
    # The password's first word alone is not a cut (test_the_first_word_of_a_password_…).
    lengths = [n for n in range(len(form) - 1, least - 1, -1) if n != _first_word(form)]
    if not lengths:
        return []
    pattern = re.compile(
        "(?:" + "|".join(re.escape(form[:n]) for n in lengths) + ")" + r"(?=\n|…|\.\.\.|\Z)"
    )
    return [m.span() for m in pattern.finditer(text)]


@settings(max_examples=300, deadline=None)
@given(
    form=st.text(alphabet="ab.\n…", min_size=1, max_size=9),
    pieces=st.lists(
        st.sampled_from(["a", "b", "ab", "ba", ".", "...", "\n", "…", "aab"]), max_size=12
    ),
)
def test_the_cut_matcher_finds_what_one_alternative_per_prefix_found(
    form: str, pieces: list[str]
) -> None:
    from installer.decide.redact import _cut_pattern

    text = "".join(pieces) + form[: len(form) // 2]
    cut = _cut_pattern(form)
    assert (cut.spans(text) if cut is not None else []) == _cut_by_alternation(form, text)


def test_a_10_kb_token_is_masked_whole_and_cut_short() -> None:
    token = ("eyJhbGciOi" + "x7Q%/:" * 1700)[:10240]
    redactor = Redactor([token])

    assert redactor(f"token: {token}\n") == f"token: {MASK}\n"
    assert redactor(f"Error: bad token {token[:4000]}…") == f"Error: bad token {MASK}…"
    assert redactor(f"auth {urllib.parse.quote(token, safe='')} x") == f"auth {MASK} x"
    assert token[:100] not in redactor(f"{token[:5000]}\n{token}")


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        pytest.param("k3d", "k3d", id="the-tool-name-alone"),
        pytest.param("run k3d\n", "run k3d\n", id="the-tool-name-at-a-line-end"),
        pytest.param("k3d cluster create", "k3d cluster create", id="a-command"),
        pytest.param("pw k3d-\n", f"pw {MASK}\n", id="one-character-more-is-masked"),
        pytest.param("pw k3d-Sec…", f"pw {MASK}…", id="cut-inside-the-password"),
        pytest.param("pw k3d-Secret-9!", f"pw {MASK}", id="the-password"),
    ],
)
def test_the_first_word_of_a_password_is_not_taken_for_the_password_cut_short(
    text: str, shown: str
) -> None:
    assert Redactor(["k3d-Secret-9!"])(text) == shown


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        pytest.param(
            "https://admin:pw@host:6443/x",
            "https://admin:********@host:6443/x",
            id="kube-api-server",
        ),
        pytest.param(
            "http://u:p@ss@proxy:3128 a@b.c",
            "http://u:********@proxy:3128 a@b.c",
            id="at-in-the-password",
        ),
        pytest.param(
            '{"u": "https://u:x@h", "m": "c@d"}',
            '{"u": "https://u:********@h", "m": "c@d"}',
            id="json",
        ),
        pytest.param(
            "http://u:p%40ss@proxy:3128", "http://u:********@proxy:3128", id="percent-encoded"
        ),
        pytest.param("https://a:b@h?x=c@d", "https://a:********@h?x=c@d", id="at-in-the-query"),
        pytest.param(
            "ssh://git@github.com", "ssh://git@github.com", id="a-user-alone-is-no-password"
        ),
        pytest.param("http://proxy:3128/a@b", "http://proxy:3128/a@b", id="a-port-is-no-password"),
    ],
)
def test_a_urls_password_is_masked_whether_or_not_it_is_known(text: str, shown: str) -> None:
    assert Redactor()(text) == shown
    assert Redactor(["unrelated-secret"])(text) == shown


def test_a_remedys_url_template_is_not_masked_but_a_known_password_so_spelled_is() -> None:
    assert Redactor()("use http://user:password@host:port") == "use http://user:password@host:port"
    assert Redactor(["password"])("http://u:password@proxy:3128") == f"http://u:{MASK}@proxy:3128"


@pytest.mark.parametrize(
    "text",
    [
        "server https://admin:password@10.0.0.5:6443",  # a kubeconfig's real, weak password
        "server https://admin:Pass@cluster.local:6443",
        "https://user:password@10.0.0.5:6443",  # the template's words, a real host
    ],
)
def test_a_weak_password_that_reads_like_a_placeholder_is_still_masked(text: str) -> None:
    shown = Redactor()(text)
    assert "assword@" not in shown and "Pass@" not in shown and MASK in shown
