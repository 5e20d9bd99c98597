"""What one password hash costs: CPU, wall time and memory, for a few hashers and parameters.

A sign-up or log-in hashes the password once; it is the costliest thing a
visitor can make the server do. For each candidate this prints the CPU time of
one hash (median), its memory (the peak resident memory one hash adds, measured
in a fresh process), and the wall time of a burst of hashes run at once on the
machine's cores, as a burst of sign-ups would:

    .venv/bin/python bench/hashing.py                  # 5 hashes each, a burst of 8
    .venv/bin/python bench/hashing.py --rounds 9 --burst 16

The row marked `*` is the hasher configured in settings (`PASSWORD_HASHERS[0]`).
Bounded: rounds x candidates hashes plus one burst each, and one short child
process per candidate for the memory figure.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from django.contrib.auth.hashers import (  # noqa: E402
    Argon2PasswordHasher,
    BasePasswordHasher,
    PBKDF2PasswordHasher,
)

from easyharp_site.accounts.hashers import ServiceArgon2PasswordHasher  # noqa: E402

PASSWORD = "correct horse battery staple"


def argon2(time_cost: int, memory_mib: int, parallelism: int) -> BasePasswordHasher:
    hasher = Argon2PasswordHasher()
    hasher.time_cost = time_cost
    hasher.memory_cost = memory_mib * 1024
    hasher.parallelism = parallelism
    return hasher


@dataclass(frozen=True)
class Candidate:
    name: str
    hasher: BasePasswordHasher
    chosen: bool = False


def candidates() -> list[Candidate]:
    chosen = ServiceArgon2PasswordHasher()
    return [
        Candidate(f"PBKDF2-SHA256, {PBKDF2PasswordHasher.iterations:,} iterations "
                  "(Django 5.2 default)", PBKDF2PasswordHasher()),
        Candidate("Argon2id t=2 m=100 MiB p=8 (Django default)", argon2(2, 100, 8)),
        Candidate("Argon2id t=3 m=64 MiB p=4 (RFC 9106, 2nd choice)", argon2(3, 64, 4)),
        Candidate("Argon2id t=1 m=46 MiB p=1 (OWASP)", argon2(1, 46, 1)),
        Candidate("Argon2id t=2 m=19 MiB p=1 (OWASP)", argon2(2, 19, 1)),
        Candidate("Argon2id t=3 m=12 MiB p=1 (OWASP)", argon2(3, 12, 1)),
        Candidate("Argon2id t=5 m=7 MiB p=1 (OWASP)", argon2(5, 7, 1)),
        Candidate(
            f"Argon2id t={chosen.time_cost} m={chosen.memory_cost // 1024} MiB "
            f"p={chosen.parallelism} (configured)",
            chosen,
            chosen=True,
        ),
    ]  # fmt: skip


def one_hash(hasher: BasePasswordHasher) -> str:
    return hasher.encode(PASSWORD, hasher.salt())


def cpu_ms(hasher: BasePasswordHasher, rounds: int) -> tuple[float, float]:
    """Median CPU and wall milliseconds of one hash."""
    cpu, wall = [], []
    for _ in range(rounds):
        c0, w0 = time.process_time(), time.perf_counter()
        one_hash(hasher)
        cpu.append((time.process_time() - c0) * 1000)
        wall.append((time.perf_counter() - w0) * 1000)
    return statistics.median(cpu), statistics.median(wall)


def burst_seconds(hasher: BasePasswordHasher, size: int) -> float:
    """Wall seconds for `size` hashes started at once (argon2 and hashlib release the GIL)."""
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=size) as pool:
        list(pool.map(lambda _: one_hash(hasher), range(size)))
    return time.perf_counter() - start


def memory_mib(index: int) -> float:
    """Peak resident memory one hash adds, in a fresh process (the OS's own count)."""
    result = subprocess.run(
        [sys.executable, __file__, "--memory-of", str(index)],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    return float(result.stdout.strip())


def _peak_resident_kib() -> int:
    # VmHWM belongs to this program's memory alone; getrusage's ru_maxrss would
    # also count the parent's peak, inherited across fork and exec.
    status = Path("/proc/self/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmHWM:")).split()[1])


def _print_memory_of(index: int) -> None:
    hasher = candidates()[index].hasher
    before = _peak_resident_kib()
    one_hash(hasher)
    print(f"{(_peak_resident_kib() - before) / 1024:.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="hashes timed per candidate")
    parser.add_argument("--burst", type=int, default=8, help="hashes started at once")
    parser.add_argument("--memory-of", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_of is not None:
        _print_memory_of(args.memory_of)
        return 0
    cores = len(os.sched_getaffinity(0))
    print(f"{cores} cores, {args.rounds} hashes each, bursts of {args.burst}; "
          f"load average {os.getloadavg()[0]:.1f} at the start")  # fmt: skip
    header = (
        f"{'hasher':<58} {'CPU ms':>7} {'wall ms':>8} {'MiB':>6} "
        f"{'burst s':>8} {'hashes/s/core':>13}"
    )
    print(header)
    print("-" * len(header))
    for index, candidate in enumerate(candidates()):
        cpu, wall = cpu_ms(candidate.hasher, args.rounds)
        memory = memory_mib(index)
        burst = burst_seconds(candidate.hasher, args.burst)
        mark = "*" if candidate.chosen else " "
        print(
            f"{mark}{candidate.name:<57} {cpu:7.0f} {wall:8.0f} {memory:6.1f} "
            f"{burst:8.2f} {1000 / cpu:13.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
