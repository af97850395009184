"""A Spark standalone cluster on this machine, for the scale-out benchmark and the recipe's test.

    python bench/cluster.py --workers 2 -- reconcile check --engine spark --master {master} --from-parquet DS

starts a master and N workers (one core each) from pyspark's own scripts, runs the command with
``{master}`` replaced by the master's URL (``{connect}`` by a Spark Connect server's, with
``--connect``), and stops the cluster; its exit code is the command's. Timed whole with the
workplace's timing tool, the cluster's start (about ten seconds) is in every figure alike.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait(what: str, ready, process: subprocess.Popen, log: Path, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited {process.returncode}: {log.read_text()[-2000:]}")
        try:
            if ready():
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"{what} not ready in {seconds:.0f} s: {log.read_text()[-2000:]}")


def _start(command: list, log: Path, env: dict, cwd: Path | None = None) -> subprocess.Popen:
    with open(log, "wb") as out:  # the child keeps its own descriptor
        return subprocess.Popen([str(c) for c in command], stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd,
                                start_new_session=True)


@contextmanager
def standalone(workers: int, folder: Path, connect: bool = False, cores: int = 1) -> Iterator[tuple[str, str | None]]:
    """A master and ``workers`` workers of ``cores`` cores each (and a Spark Connect server in front of them,
    run from its own working folder, holding one core so that other applications get the rest): yields
    (spark://… URL, sc://… URL or None); everything stopped on exit."""
    import pyspark

    home = Path(pyspark.__file__).parent
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOG_DIR": str(folder), "SPARK_PID_DIR": str(folder),
           "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}  # executors run this interpreter
    port, ui, connect_port = free_port(), free_port(), free_port()
    master = f"spark://127.0.0.1:{port}"
    processes: list[subprocess.Popen] = []
    try:
        processes.append(_start([home / "bin" / "spark-class", "org.apache.spark.deploy.master.Master", "--host",
                                 "127.0.0.1", "--port", port, "--webui-port", ui], folder / "master.log", env))
        for n in range(workers):
            processes.append(_start([home / "bin" / "spark-class", "org.apache.spark.deploy.worker.Worker", master,
                                     "--cores", cores, "--memory", "2g", "--webui-port", free_port(),
                                     "--work-dir", folder / f"work-{n}"], folder / f"worker-{n}.log", env))

        def all_workers() -> bool:
            with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=2) as answer:
                return json.load(answer).get("aliveworkers", 0) >= workers

        _wait(f"the master and its {workers} worker(s)", all_workers, processes[0], folder / "master.log", 120)
        url = None
        if connect:
            (folder / "server").mkdir(exist_ok=True)  # the server's working folder: not the client's
            processes.append(_start([home / "sbin" / "start-connect-server.sh", "--wait", "--master", master,
                                     "--conf", f"spark.connect.grpc.binding.port={connect_port}",
                                     "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
                                     # an application keeps every core it is given until it ends: without a
                                     # cap the server would leave none to the jobs sent with --master
                                     "--conf", "spark.cores.max=1"],
                                    folder / "connect.log", env, cwd=folder / "server"))

            def listening() -> bool:
                with socket.create_connection(("127.0.0.1", connect_port), timeout=1):
                    return True

            _wait("the Spark Connect server", listening, processes[-1], folder / "connect.log", 180)
            url = f"sc://127.0.0.1:{connect_port}"
        yield master, url
    finally:
        for process in reversed(processes):
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--cores", type=int, default=1, help="cores each worker offers")
    parser.add_argument("--connect", action="store_true", help="start a Spark Connect server too ({connect})")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command to run on the cluster")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    with tempfile.TemporaryDirectory(prefix="spark-cluster-") as folder:
        with standalone(args.workers, Path(folder), args.connect, args.cores) as (master, connect):
            filled = [part.replace("{master}", master).replace("{connect}", connect or "") for part in command]
            return subprocess.run(filled).returncode


if __name__ == "__main__":
    sys.exit(main())
