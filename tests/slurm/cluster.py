"""A single-node SLURM cluster on loopback, from Debian's packages, for the integration test and
for trying the SLURM profile by hand.

It starts munged, MariaDB, slurmdbd (the executor asks `sacct` for job states, so accounting must
be real), slurmctld and slurmd, registers a cluster, an account and the current user, and waits
until the node is idle. Every file (keys, sockets, configs, database, state, spool, logs) lives
under one directory; every daemon is started here and stopped by its process id. The node declares
two fake GPUs (empty files as their devices), so GPU requests are accepted and recorded.

    python tests/slurm/cluster.py    # start, print the environment to use, stop on Ctrl-C

Client commands go through wrappers in <root>/bin that point at this cluster's slurm.conf: the
executor's job step strips SLURM_* variables (SLURM_CONF too) before it calls srun.
"""

from __future__ import annotations

import getpass
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The Debian packages that provide these: munge, mariadb-server-core, mariadb-client-core,
# slurmdbd, slurmctld, slurmd, slurm-client (tests/slurm/install-packages.sh installs them).
DAEMONS = ("munged", "mariadb-install-db", "mariadbd", "slurmdbd", "slurmctld", "slurmd")
CLIENTS = ("mariadb", "munge", "sacctmgr", "sbatch", "srun", "sacct", "squeue", "scancel", "sinfo", "scontrol")
NAME = "linearlens"  # cluster and account
NODE = "linearlens-node"
MARKER = "LINEARLENS_TEST_CLUSTER"  # in the environment of every process that belongs to a cluster


def unavailable_reason() -> str | None:
    """Why a cluster cannot be started on this machine, or None when it can."""
    if not sys.platform.startswith("linux"):
        return "the local SLURM cluster needs Linux"
    missing = [command for command in DAEMONS + CLIENTS if shutil.which(command) is None]
    if missing:
        return (f"the local SLURM cluster needs Debian's SLURM, munge and MariaDB packages (missing: "
                f"{', '.join(missing)}); install them as root with tests/slurm/install-packages.sh")
    if os.geteuid() != 0:
        return "the local SLURM cluster runs slurmd, which starts jobs, and so must run as root"
    return None


class LocalSlurmCluster:
    """Use as a context manager: ``with LocalSlurmCluster(root) as cluster: ... cluster.env``."""

    def __init__(self, root: Path, cpus: int | None = None, gpus: int = 2):
        self.root = Path(root)
        self.cpus = cpus or os.cpu_count() or 1
        self.gpus = gpus
        self.daemons: dict[str, subprocess.Popen] = {}  # in start order
        self.ports = free_ports(4)
        self.slurm_conf = self.root / "etc" / "slurm.conf"
        self.munge_socket = self.root / "run" / "munge.sock"
        self.db_socket = self.root / "run" / "mariadb.sock"
        self.user = getpass.getuser()

    # --- the environment clients and jobs use -----------------------------------------------

    @property
    def env(self) -> dict[str, str]:
        """Variables to add to a process's environment so that SLURM commands reach this cluster."""
        return {"PATH": f"{self.root / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
                "SLURM_CONF": str(self.slurm_conf), MARKER: str(self.root)}

    def run(self, *command: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
        """A command run against this cluster; with ``check``, a failure raises with its stderr."""
        result = subprocess.run(command, env={**os.environ, **self.env}, capture_output=True, text=True,
                                timeout=timeout)
        if check and result.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} exited with {result.returncode}: {result.stderr.strip()}")
        return result

    def sacct(self, fields: list[str]) -> list[dict[str, str]]:
        """Every job this cluster has run (allocations, not steps), one dict of ``fields`` each."""
        output = self.run("sacct", "--allusers", "-X", "--parsable2", "--noheader",
                          "--starttime", "2000-01-01", f"--format={','.join(fields)}").stdout
        return [dict(zip(fields, line.split("|"))) for line in output.splitlines() if line]

    # --- start and stop --------------------------------------------------------------------

    def __enter__(self) -> "LocalSlurmCluster":
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        leftovers = self.stop()
        if leftovers:
            print(f"local SLURM cluster: ended leftover processes: {leftovers}", file=sys.stderr)

    def start(self) -> None:
        self._make_directories()
        self._write_client_wrappers()
        self._start_munge()
        self._start_database()
        self._start_slurmdbd()
        self._register_accounts()
        self._start_controller_and_node()

    def stop(self) -> list[str]:
        """Cancel the jobs, stop the daemons by pid (newest first), then end any process still
        carrying this cluster's marker (a job step the daemons left behind). Returns those."""
        if "slurmctld" in self.daemons and self.daemons["slurmctld"].poll() is None:
            self._cancel_jobs()
        for process in reversed(self.daemons.values()):
            terminate(process)
        self.daemons.clear()
        strays = processes_with_marker(str(self.root))
        for pid, _ in strays:
            kill_quietly(pid, signal.SIGKILL)
        return [f"{pid} {command}" for pid, command in strays]

    def _cancel_jobs(self) -> None:
        jobs = self.run("squeue", "--noheader", "--format=%A", check=False).stdout.split()
        if jobs:
            self.run("scancel", *jobs, check=False)
        wait_until(lambda: not self.run("squeue", "--noheader", check=False).stdout.strip(), timeout=60)

    # --- the pieces ------------------------------------------------------------------------

    def _make_directories(self) -> None:
        for name, mode in (("", 0o755), ("etc", 0o755), ("run", 0o755), ("bin", 0o755), ("munge", 0o700),
                           ("db", 0o700), ("dev", 0o755), ("state", 0o700), ("spool", 0o755), ("log", 0o755)):
            (self.root / name).mkdir(parents=True, exist_ok=True)
            (self.root / name).chmod(mode)

    def _write_client_wrappers(self) -> None:
        for command in CLIENTS:
            wrapper = self.root / "bin" / command
            wrapper.write_text(f"#!/bin/sh\nSLURM_CONF='{self.slurm_conf}' exec {shutil.which(command)} \"$@\"\n")
            wrapper.chmod(0o755)

    def _start_munge(self) -> None:
        key = self.root / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        self._start("munged", "munged", "--foreground", f"--socket={self.munge_socket}", f"--key-file={key}",
                    f"--pid-file={self.root / 'run' / 'munged.pid'}", f"--seed-file={self.root / 'munge' / 'seed'}",
                    f"--log-file={self.root / 'log' / 'munged.log'}")
        self._wait("munged", lambda: self.run("munge", "--socket", str(self.munge_socket), "--no-input",
                                              check=False).returncode == 0)

    def _start_database(self) -> None:
        datadir = self.root / "db"
        server_options = ["--no-defaults", f"--datadir={datadir}", f"--user={self.user}"]
        self.run("mariadb-install-db", *server_options, "--auth-root-authentication-method=normal", "--skip-test-db",
                 timeout=120)
        self._start("mariadb", "mariadbd", *server_options, "--bind-address=127.0.0.1",
                    f"--port={self.ports[3]}", f"--socket={self.db_socket}", "--skip-log-bin",
                    f"--pid-file={self.root / 'run' / 'mariadb.pid'}", "--innodb-buffer-pool-size=64M",
                    "--innodb-lock-wait-timeout=900", f"--log-error={self.root / 'log' / 'mariadb.log'}")
        self._wait("mariadb", lambda: self.run("mariadb", "--no-defaults", f"--socket={self.db_socket}",
                                               "--user=root", "--execute=SELECT 1", check=False).returncode == 0)

    def _start_slurmdbd(self) -> None:
        self._write_configs()
        self._start("slurmdbd", "slurmdbd", "-D")
        self._wait("slurmdbd", lambda: self.run("sacctmgr", "--noheader", "list", "cluster",
                                                check=False).returncode == 0)

    def _register_accounts(self) -> None:
        self.run("sacctmgr", "--immediate", "add", "cluster", NAME)
        self.run("sacctmgr", "--immediate", "add", "account", NAME, "Description=linearlens tests",
                 f"Organization={NAME}")
        self.run("sacctmgr", "--immediate", "add", "user", self.user, f"Account={NAME}")

    def _start_controller_and_node(self) -> None:
        self._start("slurmctld", "slurmctld", "-D")
        self._wait("slurmctld", lambda: self.run("scontrol", "ping", check=False).returncode == 0)
        self._start("slurmd", "slurmd", "-D", "-N", NODE)
        self._wait("slurmd", lambda: self.run("sinfo", "--noheader", "--nodes", NODE, "--format=%T",
                                              check=False).stdout.split() == ["idle"])

    def _write_configs(self) -> None:
        host = socket.gethostname().split(".")[0]
        ctld_port, slurmd_port, dbd_port, db_port = self.ports
        slurm_conf = f"""\
ClusterName={NAME}
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser={self.user}
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={self.munge_socket}
StateSaveLocation={self.root / 'state'}
SlurmdSpoolDir={self.root / 'spool'}
SlurmctldPidFile={self.root / 'run' / 'slurmctld.pid'}
SlurmdPidFile={self.root / 'run' / 'slurmd.pid'}
SlurmctldLogFile={self.root / 'log' / 'slurmctld.log'}
SlurmdLogFile={self.root / 'log' / 'slurmd.log'}
# No cgroups: processes tracked through /proc, tasks not confined.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
KillWait=5
# The node below is what the profile's requests are checked against, whatever this machine has.
SlurmdParameters=config_overrides
GresTypes=gpu
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort={dbd_port}
AccountingStoragePass={self.munge_socket}
AccountingStorageEnforce=associations
AccountingStorageTRES=gres/gpu
AccountingStoreFlags=job_comment
NodeName={NODE} NodeAddr=127.0.0.1 NodeHostname={host} CPUs={self.cpus} RealMemory=65536 Gres=gpu:{self.gpus} State=UNKNOWN
PartitionName=cpu Nodes={NODE} Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes={NODE} MaxTime=INFINITE State=UP
"""
        dbd_conf = f"""\
AuthType=auth/munge
AuthInfo=socket={self.munge_socket}
DbdHost={host}
DbdAddr=127.0.0.1
DbdPort={dbd_port}
SlurmUser={self.user}
LogFile={self.root / 'log' / 'slurmdbd.log'}
PidFile={self.root / 'run' / 'slurmdbd.pid'}
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort={db_port}
StorageUser=root
StorageLoc=slurm_acct_db
"""
        # Fake GPUs: empty files stand in for the device files, nothing is detected or confined.
        devices = [self.root / "dev" / f"gpu{index}" for index in range(self.gpus)]
        for device in devices:
            device.touch()
        gres_conf = "AutoDetect=off\n" + "".join(f"NodeName={NODE} Name=gpu File={device}\n" for device in devices)
        etc = self.root / "etc"
        (etc / "slurm.conf").write_text(slurm_conf)
        (etc / "gres.conf").write_text(gres_conf)
        (etc / "slurmdbd.conf").write_text(dbd_conf)
        (etc / "slurmdbd.conf").chmod(0o600)  # slurmdbd refuses a readable one: it holds the DB login

    # --- daemons ---------------------------------------------------------------------------

    def _start(self, name: str, *command: str) -> None:
        with open(self.root / "log" / f"{name}.out", "wb") as out:
            self.daemons[name] = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                                  stdin=subprocess.DEVNULL, env={**os.environ, **self.env},
                                                  start_new_session=True)

    def _wait(self, name: str, ready, timeout: float = 60) -> None:
        process = self.daemons[name]

        def ready_or_dead():
            if process.poll() is not None:
                raise RuntimeError(f"{name} exited with {process.returncode}:\n{self.log_tail(name)}")
            return ready()

        if not wait_until(ready_or_dead, timeout):
            raise TimeoutError(f"{name} was not ready after {timeout:.0f} s:\n{self.log_tail(name)}")

    def log_tail(self, name: str, lines: int = 20) -> str:
        """The end of a daemon's own log and of its captured output."""
        tails = []
        for path in (self.root / "log" / f"{name}.log", self.root / "log" / f"{name}.out"):
            if path.exists():
                tails.append(f"--- {path}\n" + "\n".join(path.read_text(errors="replace").splitlines()[-lines:]))
        return "\n".join(tails)


def wait_until(condition, timeout: float, interval: float = 0.25) -> bool:
    """Poll ``condition`` until it holds (True) or ``timeout`` seconds pass (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(interval)
    return False


def free_ports(count: int) -> list[int]:
    """Ports no TCP socket uses, read from /proc (so no socket is opened here), below Linux's
    ephemeral range so that no outgoing connection takes one meanwhile."""
    used = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if os.path.exists(table):
            for line in Path(table).read_text().splitlines()[1:]:
                used.add(int(line.split()[1].rsplit(":", 1)[1], 16))
    candidates = [port for port in range(20000, 32000) if port not in used]
    return random.sample(candidates, count)


def terminate(process: subprocess.Popen, grace: float = 15) -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def processes_with_marker(value: str) -> list[tuple[int, str]]:
    """(pid, command) of every process whose environment has MARKER=value, this one excepted."""
    needle = f"{MARKER}={value}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                found.append((int(entry.name), (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()))
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found


def kill_quietly(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def main() -> int:
    reason = unavailable_reason()
    if reason:
        print(reason, file=sys.stderr)
        return 1
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # leaves through the context manager
    root = Path(tempfile.mkdtemp(prefix="linearlens-slurm-"))
    try:
        with LocalSlurmCluster(root) as cluster:
            print(f"SLURM cluster '{NAME}' is up (files in {root}). In another shell, in this checkout:\n"
                  f"  export PATH='{root / 'bin'}':\"$PATH\" SLURM_CONF='{cluster.slurm_conf}'\n"
                  f"  export SLURM_ACCOUNT={NAME} SLURM_PARTITION=cpu SLURM_GPU_PARTITION=gpu\n"
                  f"  snakemake --profile profiles/slurm --configfile config/smoke.yaml\n"
                  f"Ctrl-C here cancels its jobs and stops it.", flush=True)
            while True:
                signal.pause()
    except KeyboardInterrupt:
        pass
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
