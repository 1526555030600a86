"""`plan` asks helm itself whether it would install the planned release.

Only helm knows what the chart demands of the server, so `plan` runs the planned `helm
upgrade --install --dry-run=server` with the planned values in a private temporary file.
helm's refusal becomes plan's verdict; no answer (a timeout, helm not started) is said as
such, never taken for acceptance or refusal.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
from collections.abc import Mapping

from installer.commands.install_plan import Plan
from installer.decide import install_verdict, remedy
from installer.decide.errors import InstallerError
from installer.decide.model import os_name
from installer.decide.redact import Redactor
from installer.decide.render import missing_credentials
from installer.decide.tooling import Tool
from installer.edges import call, childio, helm, proc, tempdirs
from installer.edges.call import NoAnswer
from installer.edges.valuesfile import write_private

DRY_RUN_TIMEOUT_S = 120.0  # rendering plus one read per object; a first install is seconds
GOES_AHEAD = ("install", "upgrade", "upgrade-elsewhere")


def dry_run_args(plan: Plan, values_path: str) -> list[str]:
    """The planned argv (helm.upgrade_install_args) with the private values file, as a
    server-side dry run that prints no Secret."""
    probe = plan.cfg.probe
    return [
        *helm.upgrade_install_args(
            probe.release, plan.cfg.chart, probe.namespace, values_path, probe.conn
        ),
        "--dry-run=server",
        "--hide-secret",
    ]


def not_run_because(plan: Plan) -> str:
    """Why no dry run can say what install will meet ("" when one can)."""
    if plan.verdict is not None and plan.verdict.recovery:
        # helm would answer "another operation is in progress": install recovers first.
        return (
            f"install first recovers the release (helm {plan.verdict.recovery}); helm is "
            "asked about the chart only after that"
        )
    chart = plan.cfg.chart
    if not (os.path.isdir(chart) or os.path.isfile(chart)):
        return (
            "the chart comes from a repository that install prepares first; "
            "helm checks it against the cluster only then"
        )
    if plan.data is not None and missing_credentials(plan.values):
        return "the client credentials are not known yet (install asks for them)"
    return ""


def with_dry_run(
    plan: Plan, helm_tool: Tool | None, env: Mapping[str, str], redactor: Redactor
) -> Plan:
    """The plan with helm's answer in its verdict (`dry_run`), refused when helm refuses."""
    verdict = plan.verdict
    if verdict is None or verdict.action not in GOES_AHEAD:
        return plan
    why = "helm was not found" if helm_tool is None else not_run_because(plan)
    if why or helm_tool is None:
        return _with(plan, verdict, f"not run: {why}")
    result = _dry_run(plan, helm_tool, env, redactor)
    if isinstance(result, NoAnswer):  # timed out, or could not start
        return _with(plan, verdict, f"no answer: {result.reason}")
    if result.rc == 0:
        return _with(plan, verdict, "helm's server-side dry run accepted the chart and values")
    said = childio.last_line(redactor(result.stderr), result.rc)
    conn, probe = plan.cfg.probe.conn, plan.cfg.probe
    exists = verdict.action != "install"
    # A first install that helm refuses leaves no release: nothing to roll back or remove.
    fix = (
        "nothing was changed; fix what helm names (a chart whose kubeVersion excludes "
        "this cluster needs another cluster or chart version), then "
        f"{remedy.installer(conn, probe.namespace, 'plan')}"
    )
    if exists:
        fix += f"\nto inspect: {remedy.helm(['status', probe.release], conn, probe.namespace)}"
    error = InstallerError(f"helm refuses to {verdict.action.split('-')[0]} the chart: {said}", fix)
    refused = install_verdict.Verdict(
        "refused",
        error.message,
        error,
        verdict.target,
        None,
        verdict.status,
        verdict.installed_chart,
        dry_run=f"refused: {said}",
    )
    return dataclasses.replace(plan, verdict=refused)


def _with(plan: Plan, verdict: install_verdict.Verdict, said: str) -> Plan:
    return dataclasses.replace(plan, verdict=dataclasses.replace(verdict, dry_run=said))


def _dry_run(
    plan: Plan, helm_tool: Tool, env: Mapping[str, str], redactor: Redactor
) -> proc.Result | NoAnswer:
    if plan.data is None:  # the caller's own values file, used as it is
        return _answer(plan, helm_tool, plan.cfg.values_path, env, redactor)
    directory = tempdirs.make("plan")
    try:
        path = os.path.join(directory, "values.yaml")
        try:
            write_private(path, plan.data, env=env, os_=os_name(sys.platform))
        except InstallerError as exc:  # no values to dry-run with: no answer either
            return NoAnswer(exc.message, exc)
        return _answer(plan, helm_tool, path, env, redactor)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _answer(
    plan: Plan, helm_tool: Tool, values_path: str, env: Mapping[str, str], redactor: Redactor
) -> proc.Result | NoAnswer:
    # The rendered manifests go nowhere: they are not needed, and they hold the values.
    with open(os.devnull, "wb") as sink:
        return call.answer(
            helm_tool,
            dry_run_args(plan, values_path),
            timeout=DRY_RUN_TIMEOUT_S,
            env=env,
            redactor=redactor,
            stdout=sink,
        )
