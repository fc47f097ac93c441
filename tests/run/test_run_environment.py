"""A spec whose command prints its environment proves every variable ``run --local`` gives a node:
Trainer's PET_* / JAX_* / OMPI_MCA_* as its plugins inject them, the runtime's and the job's env,
secretEnv from an env file or the shell, the TRAINSPEC_* contract with local paths."""

from __future__ import annotations

import json
from pathlib import Path

from run_testlib import PRINTENV, RUNTIME, by_prefix, clean_env, env_lines, trainspec

SECRET = "s3cr3t-value-never-on-disk"


def _spec(tmp_path: Path, framework: str = "torch", *, nodes: int = 2, procs: int | None = 2, extra: str = "") -> Path:
    procs_line = f"  procsPerNode: {procs}\n" if procs else ""
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    (data / "part.jsonl").write_text("".join(json.dumps({"id": i}) + "\n" for i in range(40)))
    spec = tmp_path / "job.yaml"
    spec.write_text(
        RUNTIME.format(name="rt", framework=framework)
        + f"""---
apiVersion: trainspec.dev/v1alpha1
kind: TrainingJob
metadata: {{name: envjob, namespace: team-a}}
spec:
  runtime: rt
  command: {json.dumps(PRINTENV)}
  env: {{JOB_LEVEL: from-job, OVERRIDDEN: job}}
  secretEnv: {{HF_TOKEN: {{secret: hf, key: token}}}}
  nodes: {nodes}
{procs_line}  resourcesPerNode: {{cpu: 2}}
  data: {{source: pvc://datasets/toy, format: jsonl}}
  checkpoint: {{path: /checkpoints, size: 1Gi, keep: 4}}
{extra}"""
    )
    return spec


def _run(tmp_path: Path, spec: Path, *args: str, **env: str):
    (tmp_path / "secrets.env").write_text(f"# local stand-in for Secret hf\nexport HF_TOKEN='{SECRET}'\n")
    return trainspec(
        "run",
        "--local",
        str(spec),
        "--no-project",
        "--workdir",
        str(tmp_path / "work"),
        "--data-source",
        str(tmp_path / "data"),
        "--env-file",
        str(tmp_path / "secrets.env"),
        *args,
        cwd=tmp_path,
        env=clean_env(**env),
    )


def test_torch_nodes_get_exactly_the_pod_environment(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    done = _run(tmp_path, spec, PET_NODE_RANK="7", RANK="5", TRAINSPEC_DATA_DIR="/stale", MASTER_PORT="1")
    assert done.returncode == 0, done.stderr
    out = by_prefix(done.stdout)
    assert sorted(out) == ["node 0 ranks 0-1", "node 1 ranks 2-3"]
    nodes = [env_lines(out["node 0 ranks 0-1"]), env_lines(out["node 1 ranks 2-3"])]
    work = tmp_path / "work"
    for rank, env in enumerate(nodes):
        assert env["PET_NNODES"] == "2"
        assert env["PET_NPROC_PER_NODE"] == "2"
        assert env["PET_NODE_RANK"] == str(rank)  # the Job completion index, not the shell's stale 7
        assert env["PET_MASTER_ADDR"] == "127.0.0.1"
        assert int(env["PET_MASTER_PORT"]) > 0
        assert env["RUNTIME_LEVEL"] == "from-runtime"  # the runtime template's container env
        assert env["JOB_LEVEL"] == "from-job" and env["OVERRIDDEN"] == "job"  # trainer.env upserted over it
        assert env["HF_TOKEN"] == SECRET
        assert env["TRAINSPEC_CHECKPOINT_DIR"] == str(work / "checkpoints")
        assert env["TRAINSPEC_CHECKPOINT_KEEP"] == "4"
        assert env["TRAINSPEC_DATA_DIR"] == str(work / "workspace" / "dataset")
        assert env["TRAINSPEC_NUM_SHARDS"] == "4"
        for stale in ("RANK", "MASTER_PORT"):  # torchrun sets these per process; a pod never inherits them
            assert stale not in env
    assert nodes[0]["PET_MASTER_PORT"] == nodes[1]["PET_MASTER_PORT"]
    # The stage ran for real, with the initializer's settings, into the local shard volume.
    manifest = json.loads((work / "workspace" / "dataset" / "manifest.json").read_text())
    assert manifest["settings"]["num_shards"] == 4 and manifest["settings"]["format"] == "jsonl"
    assert "[dataset-initializer]" in done.stderr + done.stdout
    assert "work directory: work" in done.stderr


def test_secret_values_are_never_written_to_disk(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    done = _run(tmp_path, spec)
    assert done.returncode == 0, done.stderr
    assert SECRET in done.stdout  # the job printed it: it did get the value
    written = [p for p in (tmp_path / "work").rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert written == []


def test_scaling_down_resizes_the_world_and_the_shards(tmp_path: Path) -> None:
    spec = _spec(tmp_path, nodes=4, procs=2)
    done = _run(tmp_path, spec, "--nodes", "1", "--procs-per-node", "1")
    assert done.returncode == 0, done.stderr
    out = by_prefix(done.stdout)
    assert list(out) == ["node 0"]
    env = env_lines(out["node 0"])
    assert (env["PET_NNODES"], env["PET_NPROC_PER_NODE"], env["TRAINSPEC_NUM_SHARDS"]) == ("1", "1", "1")
    assert "scaled down: --nodes 1 (job: 4), --procs-per-node 1 (job: 2)" in done.stderr
    manifest = json.loads((tmp_path / "work" / "workspace" / "dataset" / "manifest.json").read_text())
    assert manifest["settings"]["num_shards"] == 1


def test_jax_nodes_get_the_jax_plugin_variables(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "jax", nodes=3, procs=None, extra="  \n")
    done = _run(tmp_path, spec)
    assert done.returncode == 0, done.stderr
    out = by_prefix(done.stdout)
    assert sorted(out) == ["node 0", "node 1", "node 2"]
    envs = [env_lines(out[f"node {i}"]) for i in range(3)]
    for index, env in enumerate(envs):
        assert env["JAX_NUM_PROCESSES"] == "3"
        assert env["JAX_PROCESS_ID"] == str(index)
        host, port = env["JAX_COORDINATOR_ADDRESS"].rsplit(":", 1)
        assert host == "127.0.0.1" and int(port) > 0
        assert not any(name.startswith("PET_") for name in env)
    assert len({env["JAX_COORDINATOR_ADDRESS"] for env in envs}) == 1


def test_mpi_runs_the_launcher_with_the_mpi_plugin_variables(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "mpi", nodes=2, procs=2)
    done = _run(tmp_path, spec)
    assert done.returncode == 0, done.stderr
    out = by_prefix(done.stdout)
    assert list(out) == ["launcher"]
    env = env_lines(out["launcher"])
    hostfile = Path(env["OMPI_MCA_orte_default_hostfile"])
    assert hostfile == tmp_path / "work" / "mpi" / "hostfile"
    assert hostfile.read_text() == "localhost slots=4\n"
    assert env["OMPI_MCA_orte_keep_fqdn_hostnames"] == "true"
    assert env["OMPI_MCA_orte_set_default_slots"] == "2"
    assert env["OMPI_MCA_plm_rsh_args"] == "-o ConnectionAttempts=10"
    assert env["JOB_LEVEL"] == "from-job" and env["HF_TOKEN"] == SECRET


def test_a_secret_from_the_shell_when_no_env_file_has_it(tmp_path: Path) -> None:
    spec = _spec(tmp_path, nodes=1, procs=1)
    done = trainspec(
        "run",
        "--local",
        str(spec),
        "--no-project",
        "--workdir",
        str(tmp_path / "work"),
        "--data-source",
        str(tmp_path / "data"),
        cwd=tmp_path,
        env=clean_env(HF_TOKEN="from-shell"),
    )
    assert done.returncode == 0, done.stderr
    assert env_lines(by_prefix(done.stdout)["node 0"])["HF_TOKEN"] == "from-shell"


def test_a_missing_secret_is_a_located_error_naming_the_secret_and_key(tmp_path: Path) -> None:
    spec = _spec(tmp_path, nodes=1, procs=1)
    env = clean_env()
    env.pop("HF_TOKEN", None)
    done = trainspec(
        "run",
        "--local",
        str(spec),
        "--no-project",
        "--workdir",
        str(tmp_path / "work"),
        "--data-source",
        str(tmp_path / "data"),
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 1
    assert "error[TS701]: spec.secretEnv.HF_TOKEN:" in done.stderr
    assert "key 'token' of Secret 'hf'" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "work").exists()  # nothing started, nothing created


def test_a_malformed_env_file_line_is_located_and_not_echoed(tmp_path: Path) -> None:
    spec = _spec(tmp_path, nodes=1, procs=1)
    (tmp_path / "bad.env").write_text("# ok\nHF_TOKEN=x\nthis-is-a-secret-without-equals\n")
    done = trainspec(
        "run",
        "--local",
        str(spec),
        "--no-project",
        "--env-file",
        str(tmp_path / "bad.env"),
        "--data-source",
        str(tmp_path / "data"),
        cwd=tmp_path,
    )
    assert done.returncode == 1
    assert f"{tmp_path / 'bad.env'}:3:1: error[TS702]" in done.stderr
    assert "this-is-a-secret" not in done.stderr
