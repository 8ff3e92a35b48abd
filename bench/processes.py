"""Measuring a sweep's processes from the driver: memory and CPU of the process tree, the largest
message the driver process (client and in-process scheduler) sends or receives, and the task
graph's dependencies, for critical paths. Shared by bench/scale.py and bench/scale_out.py.
"""

from __future__ import annotations

import os
import threading

import psutil

SAMPLE_S = 0.25


class ProcessTreeSampler:
    """Samples this process and all its descendants every SAMPLE_S seconds in a background thread.

    figures(): peak_rss_gb (largest sum of RSS over the tree), peak_rss_driver_gb (this process
    alone), peak_rss_process_gb (the largest single process), peak_rss_worker_gb (the largest
    process other than this one), cpu_s (user + system seconds of every process seen, this one
    counted from the start), processes (how many were seen).
    """

    def __init__(self, interval: float = SAMPLE_S) -> None:
        self.interval = interval
        self.root = psutil.Process(os.getpid())
        self.cpu: dict[int, float] = {}
        self.peak = self.peak_root = self.peak_single = self.peak_other = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        times = self.root.cpu_times()
        self._root_cpu0 = times.user + times.system

    def __enter__(self) -> ProcessTreeSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def _sample(self) -> None:
        total = 0
        for process in [self.root, *self.root.children(recursive=True)]:
            try:
                with process.oneshot():
                    rss = process.memory_info().rss
                    times = process.cpu_times()
            except psutil.Error:  # ended between listing and reading
                continue
            total += rss
            self.peak_single = max(self.peak_single, rss)
            if process.pid == self.root.pid:
                self.peak_root = max(self.peak_root, rss)
                self.cpu[process.pid] = times.user + times.system - self._root_cpu0
            else:
                self.peak_other = max(self.peak_other, rss)
                self.cpu[process.pid] = times.user + times.system
        self.peak = max(self.peak, total)

    def figures(self) -> dict:
        return {
            "cpu_s": float(sum(self.cpu.values())),
            "peak_rss_gb": self.peak / 1e9,
            "peak_rss_driver_gb": self.peak_root / 1e9,
            "peak_rss_process_gb": self.peak_single / 1e9,
            "peak_rss_worker_gb": self.peak_other / 1e9,
            "processes": len(self.cpu),
        }


class MessageMeter:
    """While entered: the bytes of every message this process's TCP comms read or write (the driver:
    its client and, for a local cluster, the scheduler), by wrapping distributed's TCP comm.

    largest: (bytes, direction "read"/"write", peer address) of the largest one.
    """

    def __init__(self) -> None:
        self.largest = (0, "", "")
        self.count = 0

    def __enter__(self) -> MessageMeter:
        from distributed.comm import tcp
        from distributed.utils import nbytes

        self._tcp = tcp
        self._read_frames, self._write = tcp.from_frames, tcp.TCP.write
        meter = self

        async def from_frames(frames, *args, **kwargs):
            meter._record(sum(nbytes(frame) for frame in frames), "read", "")
            return await meter._read_frames(frames, *args, **kwargs)

        async def write(comm, msg, *args, **kwargs):
            written = await meter._write(comm, msg, *args, **kwargs)
            meter._record(written, "write", comm.peer_address)
            return written

        tcp.from_frames, tcp.TCP.write = from_frames, write
        return self

    def __exit__(self, *exc) -> None:
        self._tcp.from_frames, self._tcp.TCP.write = self._read_frames, self._write

    def _record(self, size: int, direction: str, peer: str) -> None:
        self.count += 1
        if size > self.largest[0]:
            self.largest = (int(size), direction, peer)

    def figures(self) -> dict:
        size, direction, peer = self.largest
        return {
            "largest_message_mb": size / 1e6,
            "largest_message": f"{direction} {peer}".strip(),
            "messages": self.count,
        }


def dependency_recorder(scheduler):
    """A plugin for the in-process `scheduler`, added to it, that keeps every task's dependencies as
    it starts: {key: [dependency keys]} in its `dependencies`, for the critical path of the graph."""
    from distributed.diagnostics.plugin import SchedulerPlugin

    class DependencyRecorder(SchedulerPlugin):
        name = "xialpha-bench-dependencies"

        def __init__(self) -> None:
            self.dependencies: dict[str, list[str]] = {}

        def transition(self, key, start, finish, *args, **kwargs) -> None:
            if finish == "processing":
                task = scheduler.tasks.get(key)
                if task is not None:
                    self.dependencies[str(key)] = [str(dep.key) for dep in task.dependencies]

    recorder = DependencyRecorder()
    scheduler.add_plugin(recorder)
    return recorder


def critical_path(durations: dict[str, float], dependencies: dict[str, list[str]]) -> tuple[float, list[str]]:
    """(length, keys) of the longest chain of dependent tasks, each counted with its compute
    seconds (`durations`; keys without one count 0)."""
    finish: dict[str, float] = {}
    before: dict[str, str | None] = {}

    def visit(key: str) -> float:
        stack = [(key, False)]
        while stack:
            current, expanded = stack.pop()
            if current in finish:
                continue
            deps = dependencies.get(current, [])
            if not expanded:
                stack.append((current, True))
                stack.extend((dep, False) for dep in deps if dep not in finish)
                continue
            best = max(deps, key=lambda dep: finish[dep], default=None)
            before[current] = best
            finish[current] = durations.get(current, 0.0) + (finish[best] if best is not None else 0.0)
        return finish[key]

    keys = set(durations) | set(dependencies)
    if not keys:
        return 0.0, []
    last = max(keys, key=visit)
    path = [last]
    while before.get(path[-1]) is not None:
        path.append(before[path[-1]])
    return finish[last], path[::-1]
