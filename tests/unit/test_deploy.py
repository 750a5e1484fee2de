"""The deployment files under deploy/: they parse, wire together, and set only environment
variables that Outlast (or a library it uses) reads. No Docker, no cluster, no network."""

from __future__ import annotations

import functools
import json
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
COMPOSE_DIR = DEPLOY / "compose"
K8S = DEPLOY / "k8s"
DOCKERFILE = DEPLOY / "Dockerfile"
SOURCES = [
    ROOT / "worker.py",
    *(ROOT / d for d in ("agents", "activities", "workflows", "outlast")),
]

# Read by libraries, not by our code: botocore (the S3 payload store) and the OpenTelemetry SDK.
LIBRARY_PREFIXES = ("AWS_", "OTEL_")
# Services that run Outlast's own code and so get Outlast's environment.
OUTLAST_SERVICES = ("worker", "outlast-setup")
COMPOSE_SERVICES = {
    "postgresql",
    "temporal-schema",
    "temporal",
    "temporal-create-namespace",
    "temporal-ui",
    "minio",
    "minio-setup",
    "jaeger",
    "outlast-setup",
    "worker",
}
# What a worker cannot run without, or runs wrongly without, on a cluster.
WORKER_NEEDS = {
    "TEMPORAL_ADDRESS",
    "TEMPORAL_NAMESPACE",
    "OUTLAST_TASK_QUEUE",
    "OUTLAST_HOME",
    "OUTLAST_STORE_DIR",
    "OUTLAST_PAYLOAD_STORE",
    "OUTLAST_S3_BUCKET",
    "ANTHROPIC_API_KEY",
}
REQUIRED_APT = {"bubblewrap", "git"}  # activities/sandbox.py, worktrees and snapshots

# os.environ.get("X"), os.environ["X"], os.getenv("X"), and env.get("X") / env["X"] on the
# mappings that config.from_env and payload_store.external_storage take.
_ENV_READ = re.compile(
    r"""\b(?:environ|getenv|env)\s*(?:\.get\s*\(|\[|\()\s*["']([A-Z][A-Z0-9_]*)["']"""
)


@functools.cache
def code_env_names() -> frozenset[str]:
    files = [p for s in SOURCES for p in ([s] if s.is_file() else s.rglob("*.py"))]
    return frozenset(m for p in files for m in _ENV_READ.findall(p.read_text()))


def read_by_code(name: str) -> bool:
    return name in code_env_names() or name.startswith(LIBRARY_PREFIXES)


def load_all(path: Path) -> list[Any]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


@functools.cache
def compose() -> dict[str, Any]:
    return yaml.safe_load((COMPOSE_DIR / "compose.yaml").read_text())


def services() -> dict[str, Any]:
    return compose()["services"]


def env_keys(environment: dict[str, Any] | list[str] | None) -> dict[str, Any]:
    if isinstance(environment, list):
        return dict(item.partition("=")[::2] for item in environment)
    return dict(environment or {})


def env_example() -> dict[str, str]:
    lines = (COMPOSE_DIR / ".env.example").read_text().splitlines()
    pairs = (line.partition("=") for line in lines if line.strip() and not line.startswith("#"))
    return {name.strip(): value for name, _, value in pairs}


def kustomizations() -> list[Path]:
    return sorted(K8S.rglob("kustomization.yaml"))


def k8s_objects() -> list[dict[str, Any]]:
    """Every object the base kustomization applies."""
    base = K8S / "base"
    resources = yaml.safe_load((base / "kustomization.yaml").read_text())["resources"]
    return [doc for name in resources for doc in load_all(base / name)]


def k8s_object(kind: str) -> dict[str, Any]:
    (found,) = [o for o in k8s_objects() if o["kind"] == kind]
    return found


def containers(kind: str) -> list[dict[str, Any]]:
    return k8s_object(kind)["spec"]["template"]["spec"]["containers"]


def dockerfile_instructions(name: str) -> list[str]:
    text = DOCKERFILE.read_text().replace("\\\n", " ")
    return [line.split(None, 1)[1] for line in text.splitlines() if line.startswith(name + " ")]


def apt_packages() -> set[str]:
    packages: set[str] = set()
    for run in dockerfile_instructions("RUN"):
        for command in run.split("&&"):
            words = shlex.split(command)
            if words[:2] == ["apt-get", "install"]:
                packages |= {w for w in words[2:] if not w.startswith("-")}
    return packages


def cli_commands() -> set[str]:
    import typer.main

    from outlast.cli import app

    return set(typer.main.get_command(app).commands)


def is_under(path: str, mount: str) -> bool:
    return Path(path).is_relative_to(mount)


def image_is_pinned(image: str) -> bool:
    name, _, tag = image.rpartition(":")
    return bool(name) and "/" not in tag and tag not in ("", "latest")


# --- every file ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", sorted(DEPLOY.rglob("*.yaml")), ids=lambda p: str(p.relative_to(DEPLOY))
)
def test_every_yaml_file_parses_to_mappings(path: Path) -> None:
    docs = load_all(path)
    assert docs, f"{path} holds no YAML document"
    assert all(isinstance(doc, dict) for doc in docs)


# --- Docker Compose -------------------------------------------------------------------------


def test_compose_runs_the_whole_stack() -> None:
    assert COMPOSE_SERVICES <= set(services()), COMPOSE_SERVICES - set(services())


def test_outlast_services_build_the_deploy_dockerfile() -> None:
    for name in OUTLAST_SERVICES:
        build = services()[name]["build"]
        assert (COMPOSE_DIR / build["context"] / build["dockerfile"]).resolve() == DOCKERFILE
    assert DOCKERFILE.is_file()
    assert services()["worker"]["deploy"]["replicas"]


def test_compose_depends_only_on_its_own_services() -> None:
    for name, service in services().items():
        for dependency in service.get("depends_on", {}):
            assert dependency in services(), f"{name} depends on unknown {dependency}"


def test_compose_volumes_are_declared_and_bind_sources_exist() -> None:
    declared = set(compose().get("volumes") or {})
    for name, service in services().items():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("."):
                assert (COMPOSE_DIR / source).exists(), f"{name}: no {source}"
            else:
                assert source.startswith("/") or source in declared, f"{name}: {source}"


def test_compose_images_are_pinned() -> None:
    for name, service in services().items():
        assert image_is_pinned(service["image"]), f"{name}: {service['image']}"


def test_compose_worker_gets_what_it_needs() -> None:
    env = env_keys(services()["worker"]["environment"])
    missing = (WORKER_NEEDS | {"OUTLAST_HOST_ID"}) - set(env)
    assert not missing, missing
    # The replicas are one host: one fixed id, and the store on a volume they all mount.
    assert "$" not in env["OUTLAST_HOST_ID"]
    mounts = [v.split(":")[1] for v in services()["worker"]["volumes"]]
    assert any(is_under(env["OUTLAST_STORE_DIR"], m) for m in mounts)
    assert any(is_under(env["OUTLAST_HOME"], m) for m in mounts)


def test_compose_environment_values_are_strings() -> None:
    # `off`, `yes`, `no` unquoted are YAML booleans, not the strings the code compares.
    for name, service in services().items():
        for key, value in env_keys(service.get("environment")).items():
            assert value is None or isinstance(value, str), f"{name}: {key}={value!r}"


def test_env_example_names_are_used_and_required_ones_are_listed() -> None:
    text = (COMPOSE_DIR / "compose.yaml").read_text()
    example = env_example()
    for name in example:
        assert "${" + name in text, f".env.example sets {name}, which compose.yaml never uses"
    required = set(re.findall(r"\$\{([A-Z0-9_]+):\?", text))
    assert required <= set(example), required - set(example)


# --- the image ------------------------------------------------------------------------------


def test_dockerfile_runs_the_worker_module() -> None:
    (cmd,) = dockerfile_instructions("CMD")
    assert json.loads(cmd) == ["python", "-m", "worker"]
    worker = (ROOT / "worker.py").read_text()
    assert 'if __name__ == "__main__":' in worker
    assert "def main(" in worker
    # `pip install .` must install worker.py itself, or `python -m worker` fails outside the
    # source tree.
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "worker" in pyproject["tool"]["setuptools"]["py-modules"]


def test_dockerfile_copies_everything_pip_installs() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    setuptools = pyproject["tool"]["setuptools"]
    copied = {word.rstrip("/") for line in dockerfile_instructions("COPY") for word in line.split()}
    wanted = {p.rstrip("*") for p in setuptools["packages"]["find"]["include"]}
    wanted |= {f"{m}.py" for m in setuptools["py-modules"]}
    wanted |= {"pyproject.toml", pyproject["project"]["readme"]}
    assert wanted <= copied, wanted - copied


def test_dockerfile_installs_what_the_tools_and_entrypoint_need() -> None:
    packages = apt_packages()
    assert REQUIRED_APT <= packages, REQUIRED_APT - packages
    (entrypoint,) = dockerfile_instructions("ENTRYPOINT")
    assert json.loads(entrypoint)[0] in packages
    assert any("temporalio[aioboto3]" in run for run in dockerfile_instructions("RUN"))
    (user,) = dockerfile_instructions("USER")
    assert user.strip() not in ("root", "0")


# --- environment names ----------------------------------------------------------------------


def deployment_env_names() -> dict[str, set[str]]:
    """Each deploy file's environment names for Outlast's own processes."""
    names = {
        f"compose:{s}": set(env_keys(services()[s].get("environment"))) for s in OUTLAST_SERVICES
    }
    names["k8s:ConfigMap"] = set(k8s_object("ConfigMap")["data"])
    names["k8s:Secret"] = set(k8s_object("Secret")["stringData"])
    for kind in ("StatefulSet", "Job"):
        names[f"k8s:{kind}"] = {e["name"] for c in containers(kind) for e in c.get("env", [])}
    names["Dockerfile"] = {line.split("=")[0] for line in dockerfile_instructions("ENV")}
    worker_env = set(env_keys(services()["worker"]["environment"]))
    names[".env.example"] = set(env_example()) & worker_env
    return names


def test_the_code_reads_the_names_the_checks_rely_on() -> None:
    # If these vanish from the code, the grep below is broken, not the deployment.
    assert {*WORKER_NEEDS, "OUTLAST_HOST_ID"} <= code_env_names()


@pytest.mark.parametrize("source", sorted(deployment_env_names()))
def test_every_env_name_set_for_outlast_is_read_by_the_code(source: str) -> None:
    names = deployment_env_names()[source]
    assert names or source == ".env.example"
    unread = sorted(n for n in names if not read_by_code(n))
    assert not unread, f"{source} sets {unread}, which nothing reads"


# --- Kubernetes -----------------------------------------------------------------------------


def test_k8s_objects_have_identity() -> None:
    for obj in k8s_objects():
        assert obj.get("apiVersion") and obj.get("kind"), obj
        assert obj.get("metadata", {}).get("name"), obj


@pytest.mark.parametrize("path", kustomizations(), ids=lambda p: str(p.relative_to(K8S)))
def test_kustomization_lists_existing_files_and_every_manifest_beside_it(path: Path) -> None:
    kustomization = yaml.safe_load(path.read_text())
    listed = [*kustomization.get("resources", [])]
    listed += [patch["path"] for patch in kustomization.get("patches", [])]
    for entry in listed:
        target = path.parent / entry
        assert target.is_file() or (target / "kustomization.yaml").is_file(), entry
    beside = {p.name for p in path.parent.glob("*.yaml")} - {"kustomization.yaml"}
    assert beside <= set(listed), f"not applied: {beside - set(listed)}"


def test_k8s_config_and_secret_hold_what_a_worker_needs() -> None:
    config, secret = k8s_object("ConfigMap")["data"], k8s_object("Secret")["stringData"]
    missing = WORKER_NEEDS - set(config) - set(secret)
    assert not missing, missing
    assert config["OUTLAST_PAYLOAD_STORE"] == "s3" and config["OUTLAST_S3_BUCKET"]
    assert all(isinstance(v, str) for v in [*config.values(), *secret.values()])


def test_k8s_host_id_is_the_stable_pod_name() -> None:
    # A Deployment's pod names change on every rollout; a StatefulSet's do not.
    (worker,) = containers("StatefulSet")
    host_id = {e["name"]: e for e in worker["env"]}["OUTLAST_HOST_ID"]
    assert host_id["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"


def test_k8s_worker_volumes_match_the_configured_paths() -> None:
    statefulset = k8s_object("StatefulSet")
    (worker,) = containers("StatefulSet")
    config = k8s_object("ConfigMap")["data"]
    per_pod = {t["metadata"]["name"] for t in statefulset["spec"]["volumeClaimTemplates"]}

    def volume_at(path: str) -> str:
        (name,) = [m["name"] for m in worker["volumeMounts"] if is_under(path, m["mountPath"])]
        return name

    # Checkouts and per-host state on the pod's own claim, which follows the pod name.
    assert volume_at("/workspace/project") in per_pod
    assert volume_at(config["OUTLAST_HOME"]) in per_pod
    # The conversation store on the one claim every pod shares.
    volumes = {v["name"]: v for v in statefulset["spec"]["template"]["spec"]["volumes"]}
    claim = volumes[volume_at(config["OUTLAST_STORE_DIR"])]["persistentVolumeClaim"]["claimName"]
    (pvc,) = [o for o in k8s_objects() if o["kind"] == "PersistentVolumeClaim"]
    assert pvc["metadata"]["name"] == claim
    assert pvc["spec"]["accessModes"] == ["ReadWriteMany"]


def test_k8s_references_resolve() -> None:
    names = {(o["kind"], o["metadata"]["name"]) for o in k8s_objects()}
    assert ("Service", k8s_object("StatefulSet")["spec"]["serviceName"]) in names
    for kind in ("StatefulSet", "Job"):
        for container in containers(kind):
            assert image_is_pinned(container["image"]), container["image"]
            for source in container.get("envFrom", []):
                for ref_kind, key in (("ConfigMap", "configMapRef"), ("Secret", "secretRef")):
                    if key in source:
                        assert (ref_kind, source[key]["name"]) in names, source


# --- the setup jobs -------------------------------------------------------------------------


def test_setup_jobs_run_a_real_cli_command() -> None:
    commands = [services()["outlast-setup"]["command"], containers("Job")[0]["command"]]
    for command in commands:
        assert command[0] == "outlast"
        assert command[1] in cli_commands(), f"`outlast {command[1]}` does not exist"
