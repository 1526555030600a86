"""`plan`: install's reads and decisions, in install's order, with nothing changed.

Kept apart from commands/install_plan.py (the plan itself, which install builds too): the no-op
check and helm's dry run plan with make_plan, so they are called from here, not from it.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Mapping
from typing import Any

from installer.commands import already_installed, cluster_reads
from installer.commands.helm_dry_run import with_dry_run
from installer.commands.install_plan import Plan, chart_version, make_plan, with_saved_credentials
from installer.commands.probe import find_tools
from installer.commands.tools import typed_conn
from installer.decide import install_verdict
from installer.decide.errors import BadInput
from installer.decide.model import os_name
from installer.decide.redact import Redactor
from installer.decide.settings import InstallSettings, PlanConfig
from installer.edges.machine import read_machine
from installer.present import output


def plan_install(
    cfg: PlanConfig, env: Mapping[str, str], redactor: Redactor, settings: InstallSettings
) -> Plan:
    """`plan`: install's reads and decisions, in install's order, with nothing changed."""
    from installer.commands.localcluster import blocker, readable_as_it_is
    from installer.commands.localcluster_preview import read_unmerged, with_merge_hint
    from installer.commands.localcluster_survey import survey
    from installer.decide.localcluster_state import CREATE, RECREATE, START

    os_ = os_name(sys.platform)
    machine = read_machine(env)
    tools, choices, problems = find_tools(env, machine, cfg.probe.timeout)
    conn = typed_conn(cfg.probe.conn, env, choices["helm"].path, choices["kubectl"].path)
    cfg = dataclasses.replace(cfg, probe=dataclasses.replace(cfg.probe, conn=conn))
    local = survey(cfg, env, redactor, machine, os_)
    cluster = cluster_reads.read_cluster(
        cfg, env, redactor, helm_tool=tools["helm"], kubectl_tool=tools["kubectl"], os_=os_
    )
    cfg = with_saved_credentials(cfg, redactor)
    from installer.commands.credentials import open_terminal

    blocked = blocker(local, terminal=open_terminal(os_) is not None)
    name = local.settings.name if local.settings is not None else "tracebloc"
    if problems:
        # install stops before reading anything (exit 1): an answer for plan, not a refusal.
        verdict = install_verdict.Verdict("missing-tools", "; ".join(problems.values()))
    elif blocked is not None:
        # install stops with these blockers before asking; plan does the same (same exit code).
        verdict = install_verdict.Verdict("blocked", blocked.message, error=blocked)
    elif local.managed and local.action == RECREATE:
        verdict = install_verdict.Verdict(
            "install",
            f"the local cluster {name} holds no helm release and is recreated for the GPU "
            "after the question: nothing is installed in it for the guard to judge",
        )
    elif local.managed and local.action == CREATE:
        # No such cluster yet: nothing is installed in it, so the guard has nothing to judge.
        verdict = install_verdict.Verdict(
            "install",
            f"the local cluster {name} does not exist yet: "
            "nothing is installed in it for the guard to judge; install "
            "creates it after the question",
        )
    elif (
        local.managed
        and not readable_as_it_is(local, env, os_)
        and (
            unmerged := read_unmerged(
                local,
                cfg,
                env,
                redactor,
                os_,
                helm_tool=tools["helm"],
                kubectl_tool=tools["kubectl"],
            )
        )
        is not None
    ):
        # Running, not in the kube context yet: read through k3d's own kubeconfig (a read).
        cluster = unmerged
        verdict = install_verdict.verdict_for(cfg, cluster, cfg.client_id)
        if verdict.error is not None:
            with_merge_hint(verdict.error, local)
    elif local.managed and not readable_as_it_is(local, env, os_):
        # Stopped, or not in the kube context yet: it can only be read after a change
        # (start, merge), so install judges it then, after the question; plan cannot.
        why = (
            (
                "is stopped"
                if local.action == START
                else "runs but the kube context does not name it yet"
            )
            if local.action
            else "waits for Docker to be set up"
        )
        verdict = install_verdict.Verdict(
            "judged-once-up",
            f"the local cluster {name} {why}: what is "
            "installed in it is read and judged by install once it is up, "
            "after the question",
        )
    elif fetch := [name for name, tool in tools.items() if tool is None]:
        # install downloads them before its first read: what it will find is not known yet,
        # so plan neither promises an install nor refuses one.
        verdict = install_verdict.Verdict(
            "fetch-tools-first",
            f"{' and '.join(fetch)} to be downloaded "
            "first; install reads what is installed after that and "
            "decides from that read",
        )
    else:
        verdict = install_verdict.verdict_for(cfg, cluster, cfg.client_id)
        verdict = already_installed.for_plan(
            cfg,
            env,
            redactor,
            cluster,
            verdict,
            helm_tool=tools["helm"],
            kubectl_tool=tools["kubectl"],
            machine=machine,
            local=local,
            choices=choices,
            force=settings.force,
        )
    release = install_verdict.release_for_sizing(cfg, cluster, verdict)
    plan = make_plan(
        install_verdict.moved(cfg, verdict),
        env,
        redactor,
        release=release,
        machine=machine,
        nodes=cluster.nodes,
        gpu=cluster.gpu,
        local=local,
        tool_choices=choices,
        kube=cluster.target,
    )
    from installer.commands.signin import plan_note
    from installer.commands.steps import minted_later, steps

    sign_in = plan_note(cfg, env)  # what install would do for credentials, not done here
    plan = dataclasses.replace(
        plan,
        verdict=verdict,
        kube=cluster.target,
        chart_version=chart_version(cfg.chart),
        set_context_namespace=settings.set_context_namespace,
        notes=plan.notes + ([sign_in] if sign_in else []),
    )
    plan = with_dry_run(plan, tools["helm"], env, redactor)
    from installer.commands import shellpath

    # A sign-in install would run names the namespace: the list says so in its place.
    found = steps(
        minted_later(plan.cfg) if sign_in else plan.cfg,
        env,
        set_context_namespace=settings.set_context_namespace,
        local=local,
        verdict=plan.verdict,
        plan=plan,
        links=shellpath.links({**choices, **local.choices}, env, os_),
    )
    return dataclasses.replace(plan, changes=tuple(found))


def run_plan(
    args: argparse.Namespace,
    cfg: PlanConfig,
    settings: InstallSettings,
    env: Mapping[str, str],
    redactor: Redactor,
) -> int:
    """`plan`'s whole answer, from the validated settings: the values file written when
    asked for, the verdict, the network preflight; the exit code install would have."""
    from installer.edges import tempdirs
    from installer.edges.valuesfile import write_values
    from installer.present import netreport, report

    tempdirs.sweep()  # scratch copies (a kubeconfig, values) a killed run left behind
    if args.values_out and cfg.values_given:
        raise BadInput(
            "--values-out cannot be used with TRACEBLOC_VALUES_FILE: "
            "install would write no values file"
        )
    if args.values_out:
        directory = os.path.dirname(os.path.abspath(os.path.expanduser(args.values_out)))
        if not os.path.isdir(directory):
            raise BadInput(
                f"--values-out {args.values_out!r}: the directory {directory} does not exist",
                "create it first, or name a file in an existing directory",
            )
    plan = plan_install(cfg, env, redactor, settings)
    written = None
    if args.values_out and plan.data is not None:
        written = write_values(
            os.path.expanduser(args.values_out), plan.data, env=env, os_=plan.facts.machine.os
        )
    net_code, net_lines, net_json = plan_network(cfg, env, plan)
    if net_code:
        # install's network preflight stop is the run's verdict, whatever the cluster would say.
        from installer.commands.network import NetworkStop

        stop = NetworkStop(net_json)
        plan = dataclasses.replace(
            plan, verdict=install_verdict.Verdict("network-stop", stop.message, error=stop)
        )
    document = report.plan_json(plan)
    document["network"] = netreport.as_json(net_json)
    text = report.plan_text(plan)
    if written is not None:
        document["values_out"] = {
            "path": written.path,
            "changed": written.changed,
            "backup": written.backup,
        }
        text += f"\nvalues written to {written.path}" + (
            f" (previous kept as {written.backup})" if written.backup else ""
        )
    stops = plan.verdict is not None and plan.verdict.action in STOPS
    code = plan.verdict.exit_code if plan.verdict and stops else 0
    text = "\n".join([text, *net_lines])
    document["ok"], document["exit"] = code == 0, code
    if not output.emit(args.json, document, text, redactor):
        return 1
    if plan.verdict and plan.verdict.action in ("blocked", "network-stop") and plan.verdict.error:
        error = plan.verdict.error  # the line install stops with, on stderr as install says it
        output.fail(redactor(error.message), redactor(error.remedy))
    return code


def plan_network(cfg: PlanConfig, env: Mapping[str, str], plan: Any) -> tuple[int, list[str], Any]:
    """install's network preflight, shown by plan (commands/network.py): 1 on a stop, the
    lines, and the report."""
    from installer.commands import network
    from installer.commands.network_hosts import from_plan
    from installer.present import netreport

    needs = from_plan(plan, env)
    found = network.check(
        cfg,
        env,
        tools=[*network.tool_urls(plan.facts.tools), *needs.tools],
        runtime=needs.runtime,
        nvidia=needs.nvidia,
    )
    return (1 if found.stop else 0), netreport.text_lines(found), found


# The verdicts install stops with before it asks anything: plan exits with their code.
STOPS = ("refused", "blocked", "network-stop")
