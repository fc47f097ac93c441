"""A toy data-parallel training script that runs anywhere (standard library only, no torch).

Each process fits ``y = w . x + b`` by SGD over the records of its own shard, as a real
DDP script would over its data loader. It shows the helpers a trainspec job uses:

* ``open_shard()``        - a reader over this rank's records (from the stage's manifest: byte
  ranges of the source in index mode, the default; a shard file in copy mode)
* ``latest_checkpoint()`` - resume from the newest *complete* checkpoint
* ``save_checkpoint()``   - write a checkpoint atomically every ``--save-every`` steps
* ``StepMetrics``         - ``data_wait()`` around fetching a batch, ``step(samples=...)`` around the
  SGD step (the samples it trained on: ``trainspec ladder run`` reads samples/s from them)
* ``ProgressReporter``    - progress, ETA, loss and the data-wait fraction from rank 0 only: to the
  TrainJob's status with Trainer's TrainJobStatus feature, else a ``trainspec progress:`` line
* ``Tracker``             - with ``spec.tracking`` in the job, rank 0 logs the parameters and each
  report's loss to MLflow or W&B, in one run per run of the job that a restart resumes; without
  it (or on any other rank) a no-op, so the script needs neither library (docs/tracking.md)

Like real DDP, only rank 0 saves (replicas hold the same weights) and every rank resumes
from that checkpoint; a step is one batch, so on resume each rank starts reading its shard at
record ``(step % steps_per_epoch) * batch`` (``reader.records(start=...)``) instead of
re-reading what it already trained on. Records are streamed, never all held in memory.
Unlike real DDP the replicas do not all-reduce gradients (that needs a communication
backend); the comment at that spot marks where it would happen.

``--rendezvous DIR`` (a fresh directory per launch) makes the ranks wait for each other
after choosing their resume point, as ``init_process_group`` does. Without it, a slow rank
could see a checkpoint that a fast rank 0 wrote moments ago in the *same* run and skip data.

``--barrier`` does the same over TCP at ``PET_MASTER_ADDR:PET_MASTER_PORT`` (rank 0 listens,
the others connect), which Kubeflow Trainer and ``trainspec run --local`` set for every node; it
is for one process per node started directly (under torchrun that port is torchrun's own).

``TRAIN_CRASH_AFTER_STEP=K`` makes the process SIGKILL itself right after step K (used by
the tests to simulate a node failure); with ``TRAIN_CRASH_RANK=R`` only rank R does.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from trainspec.stages import (
    ProgressReporter,
    ShardReader,
    StepMetrics,
    Tracker,
    latest_checkpoint,
    open_shard,
    process_info,
    save_checkpoint,
)


def batches(shard: ShardReader, first_record: int, size: int) -> Iterator[list[dict[str, Any]]]:
    """This rank's JSON records from record ``first_record`` of its shard on, ``size`` at a time."""
    batch: list[dict[str, Any]] = []
    for record in shard.records(start=first_record):
        batch.append(json.loads(record))
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def rendezvous(directory: Path, rank: int, world: int, timeout: float = 300.0) -> None:
    """Block until all ``world`` ranks have arrived (stand-in for init_process_group)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"rank-{rank}").touch()
    deadline = time.monotonic() + timeout
    while (arrived := len(list(directory.glob("rank-*")))) < world:
        if time.monotonic() > deadline:
            raise SystemExit(f"rank {rank}: only {arrived} of {world} ranks arrived at {directory}")
        time.sleep(0.01)


def tcp_barrier(rank: int, world: int, address: str, port: int, timeout: float = 300.0) -> None:
    """Block until all ``world`` ranks have met at ``address:port`` (rank 0 hosts the meeting)."""
    if world <= 1:
        return
    deadline = time.monotonic() + timeout
    if rank == 0:
        with socket.create_server((address, port)) as server:
            server.settimeout(timeout)
            peers = [server.accept()[0] for _ in range(world - 1)]
            for peer in peers:
                with peer:
                    peer.sendall(b"go")
        return
    while True:  # rank 0 may not listen yet: retry until it does
        try:
            with socket.create_connection((address, port), timeout=timeout) as conn:
                if conn.recv(2) == b"go":
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"rank {rank}: rank 0 did not open {address}:{port}")
        time.sleep(0.02)


def sgd_step(state: dict[str, Any], batch: list[dict[str, Any]], lr: float) -> float:
    """One SGD step of linear regression on a batch; returns the batch's mean squared error."""
    w, b = state["w"], state["b"]
    gw, gb, loss = [0.0] * len(w), 0.0, 0.0
    for rec in batch:
        err = sum(wi * xi for wi, xi in zip(w, rec["x"], strict=True)) + b - rec["y"]
        loss += err * err
        for i, xi in enumerate(rec["x"]):
            gw[i] += 2 * err * xi
        gb += 2 * err
    n = len(batch)
    # Real DDP: all-reduce (average) gw and gb across ranks here, so replicas stay identical.
    state["w"] = [wi - lr * g / n for wi, g in zip(w, gw, strict=True)]
    state["b"] = b - lr * gb / n
    return loss / n


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--save-every", type=int, default=5, help="checkpoint every K steps (rank 0)")
    parser.add_argument("--report", type=Path, help="write a JSON report (records read, resume step) here")
    parser.add_argument("--rendezvous", type=Path, help="fresh directory the ranks meet in before training")
    parser.add_argument(
        "--barrier", action="store_true", help="meet the other ranks at PET_MASTER_ADDR:PET_MASTER_PORT before training"
    )
    parser.add_argument("--report-dir", type=Path, help="write the JSON report to DIR/rank-<rank>.json")
    args = parser.parse_args()

    info = process_info()
    shard = open_shard()  # checks the source against the manifest: a changed file is an error here
    num_records = shard.num_records
    if num_records is None:  # a manifest balanced by bytes may not count records: count them once
        num_records = sum(1 for _ in shard.records())
    steps_per_epoch = max(1, math.ceil(num_records / args.batch_size))
    total_steps = args.epochs * steps_per_epoch

    state: dict[str, Any] = {"step": 0, "w": [0.0, 0.0], "b": 0.0}
    resumed_from = None
    checkpoint = latest_checkpoint()
    if checkpoint is not None:
        state = json.loads((checkpoint / "state.json").read_text())
        resumed_from = state["step"]
        print(f"rank {info.rank}: resumed from {checkpoint.name} (step {resumed_from})", flush=True)
    if args.rendezvous is not None:  # every rank has picked its resume point before rank 0 saves again
        rendezvous(args.rendezvous, info.rank, info.world_size)
    if args.barrier:
        tcp_barrier(
            info.rank,
            info.world_size,
            os.environ.get("PET_MASTER_ADDR", "127.0.0.1"),
            int(os.environ.get("PET_MASTER_PORT", "29500")),
        )

    crash_after = int(os.environ.get("TRAIN_CRASH_AFTER_STEP", "-1"))
    crash_rank = os.environ.get("TRAIN_CRASH_RANK", "")
    if crash_rank and int(crash_rank) != info.rank:
        crash_after = -1
    seen: list[int] = []
    loss = float("nan")
    stream: Iterator[list[dict[str, Any]]] | None = None
    meter = StepMetrics()  # is this loop starved by its input? (data_wait_fraction)
    # The job's tracker (spec.tracking), rank 0 only: a restart resumes the same run.
    tracker = Tracker(params={"lr": args.lr, "batch_size": args.batch_size, "epochs": args.epochs}).start()
    progress = ProgressReporter(metrics=meter, tracker=tracker)  # rank 0 reports; on the other ranks a no-op
    for step in range(state["step"], total_steps):
        i = step % steps_per_epoch
        if stream is None or i == 0:  # a new epoch, or the resume point: the record offset of this step
            stream = batches(shard, i * args.batch_size, args.batch_size)
        with meter.data_wait():
            batch = next(stream, [])
        if batch:
            with meter.step(samples=len(batch)):  # what this rank trained on: samples/s for the ladder
                loss = sgd_step(state, batch, args.lr)
            seen.extend(rec["id"] for rec in batch)
        state["step"] = step + 1
        progress.report(state["step"], total_steps, metrics={"loss": round(loss, 4)})
        if info.rank == 0 and state["step"] % args.save_every == 0:
            with save_checkpoint(state["step"]) as tmp:
                (tmp / "state.json").write_text(json.dumps(state))
        if state["step"] == crash_after:
            os.kill(os.getpid(), signal.SIGKILL)
    progress.close()  # the final flush: the last step's values
    tracker.close()

    print(
        f"rank {info.rank}/{info.world_size}: {len(seen)} records from {[Path(shard.name).name]}, "
        f"step {state['step']}, loss {loss:.4f}, w={[round(v, 3) for v in state['w']]}, b={state['b']:.3f}",
        flush=True,
    )
    if args.report_dir:
        args.report_dir.mkdir(parents=True, exist_ok=True)
        args.report = args.report_dir / f"rank-{info.rank}.json"
    if args.report:
        args.report.write_text(
            json.dumps(
                {
                    "rank": info.rank,
                    "world_size": info.world_size,
                    "shards": [shard.name],
                    "ids": seen,
                    "resumed_from": resumed_from,
                    "final_step": state["step"],
                }
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
