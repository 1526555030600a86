"""config.install_settings: TB_HELM_TIMEOUT_MIN and TB_METRICS_WAIT_S from the environment."""

from __future__ import annotations

import sys

import pytest

from installer.config import install_settings
from installer.decide.errors import BadInput
from installer.decide.settings import InstallSettings
from installer.decide.tooling import Tool
from installer.edges import proc


@pytest.mark.parametrize(
    ("env", "settings"),
    [
        pytest.param({}, InstallSettings(600.0, 120.0), id="defaults"),
        pytest.param(
            {"TB_HELM_TIMEOUT_MIN": "", "TB_METRICS_WAIT_S": "  "},
            InstallSettings(600.0, 120.0),
            id="empty-means-default",
        ),
        pytest.param(
            {"TB_HELM_TIMEOUT_MIN": "0.5"}, InstallSettings(30.0, 120.0), id="half-a-minute"
        ),
        pytest.param(
            {"TB_HELM_TIMEOUT_MIN": " 20 "}, InstallSettings(1200.0, 120.0), id="spaces-around"
        ),
        pytest.param({"TB_METRICS_WAIT_S": "0"}, InstallSettings(600.0, 0.0), id="no-metrics-wait"),
        pytest.param(
            {"TB_METRICS_WAIT_S": "2.5"}, InstallSettings(600.0, 2.5), id="fractional-metrics-wait"
        ),
        pytest.param(
            {"TB_HELM_TIMEOUT_MIN": "15", "TB_METRICS_WAIT_S": "300"},
            InstallSettings(900.0, 300.0),
            id="both-set",
        ),
    ],
)
def test_install_settings(env: dict[str, str], settings: InstallSettings) -> None:
    assert install_settings(env) == settings


BAD = [
    pytest.param("-1", id="negative"),
    pytest.param("nan", id="nan"),
    pytest.param("NaN", id="nan-capitalised"),
    pytest.param("inf", id="infinite"),
    pytest.param("-inf", id="minus-infinite"),
    pytest.param("1e400", id="overflows-to-infinite"),
    pytest.param("ten", id="garbage"),
    pytest.param("10m", id="with-a-unit"),
    pytest.param("1,5", id="decimal-comma"),
]


@pytest.mark.parametrize("variable", ["TB_HELM_TIMEOUT_MIN", "TB_METRICS_WAIT_S"])
@pytest.mark.parametrize("raw", BAD)
def test_bad_values_are_bad_input_naming_the_variable(variable: str, raw: str) -> None:
    with pytest.raises(BadInput) as caught:
        install_settings({variable: raw})
    assert caught.value.exit_code == 2
    assert variable in caught.value.message
    assert repr(raw) in caught.value.message


@pytest.mark.parametrize("raw", ["0", "0.0", "-0"])
def test_zero_helm_timeout_is_bad_input(raw: str) -> None:
    with pytest.raises(BadInput) as caught:
        install_settings({"TB_HELM_TIMEOUT_MIN": raw})
    assert "TB_HELM_TIMEOUT_MIN" in caught.value.message
    assert "more than 0" in caught.value.message


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param("1000000", id="about-two-years"),
        pytest.param("1e308", id="finite-minutes-infinite-seconds"),
    ],
)
def test_a_huge_helm_timeout_is_refused_or_usable(raw: str) -> None:
    try:
        settings = install_settings({"TB_HELM_TIMEOUT_MIN": raw})
    except BadInput as refused:
        assert "TB_HELM_TIMEOUT_MIN" in refused.message
        return
    quick = Tool("python", sys.executable)
    result = proc.run(quick, ["-c", "print('ok')"], timeout=settings.helm_timeout_s)
    assert result.stdout.strip() == "ok"
