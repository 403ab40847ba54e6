"""Where a numba kernel spends its time, instruction by instruction (perf cannot name JIT code).

    python benchmarks/kernel_profile.py ALGORITHM AGENTS ARMS HORIZON [--graph G] [--edge-prob P]
        [--loss Q] [--runs R]
        [--kernel mamab.algorithms.ucb.kernel.ucb_chunk] [--top 30] [--out annotated.txt]

Runs one simulation (seed 1; ``--runs`` runs in one process) after a short warm-up, copies the
compiled machine code of ``--kernel`` (its cached entry point) out of the process, samples the
process with ``perf record`` meanwhile, and maps the samples that fall inside the kernel to its
disassembly (``objdump``): prints the hottest instructions and the share of samples per 128-byte
block; ``--out`` writes the whole disassembly with a sample count per instruction. The first
line also gives the share of the process's samples in numba's reference counting. A sample
lands a few instructions after the one that stalled (timer skid): read the hot spots with their
neighbours. Needs ``perf`` and ``objdump`` on PATH.
"""

from __future__ import annotations

import argparse
import collections
import importlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from one_config import add_config_arguments, config_fields
from refusal import refuse

from mamab.config import Config
from mamab.errors import ConfigError
from mamab.simulate import simulate

CODE_BYTES = 1 << 18  # copied from the kernel's entry: larger than any mamab kernel (the copy
# may run on into the functions compiled with it: their samples count as the kernel's)
PAGE = 4096


def kernel_code(path: str) -> tuple[int, bytes]:
    """(address, machine code from it) of the compiled kernel ``module.name``."""
    module, _, name = path.rpartition(".")
    try:
        dispatcher = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError, ValueError):
        raise refuse(f"--kernel {path}: no such function") from None
    overloads = list(getattr(dispatcher, "overloads", {}).values())
    if not overloads:
        raise refuse(f"--kernel {path}: not a numba function the run compiled")
    result = overloads[-1]
    address = result.library.get_pointer_to_function(result.fndesc.llvm_func_name)
    pages = []  # through /proc/self/mem: an unmapped page ends the copy instead of crashing
    with open("/proc/self/mem", "rb", buffering=0) as memory:
        for offset in range(0, CODE_BYTES, PAGE):
            try:
                memory.seek(address + offset)
                pages.append(memory.read(PAGE))
            except OSError:
                break
    return address, b"".join(pages)


def refcount_code() -> tuple[int, int]:
    """The addresses of numba's NRT_incref and NRT_decref, adjacent tiny functions (an atomic
    add each): a kernel that takes arrays out of tuples or passes them to helpers in its loop
    spends its time there (coop-UCB2 two fifths before issue 23's tenth round)."""
    from numba.core.runtime import nrt

    entries = [
        nrt.rtsys.library.get_pointer_to_function(f"NRT_{op}") for op in ("incref", "decref")
    ]
    return min(entries), max(entries) + 32  # the decref's atomic and its test: under 32 bytes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_config_arguments(parser)
    parser.add_argument("--kernel", default="mamab.algorithms.ucb.kernel.ucb_chunk")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--runs", type=int, default=1, help="runs sampled (more samples)")
    args = parser.parse_args()
    for tool in ("perf", "objdump"):
        if shutil.which(tool) is None:
            raise refuse(f"{tool} is not on PATH")

    def config(horizon: int, runs: int = args.runs) -> Config:
        return Config(**{**config_fields(args), "horizon": horizon, "runs": runs})

    try:
        config(args.horizon)
        simulate(config(200, runs=1), jobs=1)
    except ConfigError as err:
        raise refuse(str(err)) from None
    if args.out is not None and not args.out.resolve().parent.is_dir():
        raise refuse(f"--out {args.out}: no such folder {args.out.resolve().parent}")
    address, code = kernel_code(args.kernel)
    with tempfile.TemporaryDirectory() as tmp:
        data, binary = Path(tmp) / "perf.data", Path(tmp) / "kernel.bin"
        binary.write_bytes(code)
        perf = subprocess.Popen(
            ["perf", "record", "-q", "-o", str(data), "-p", str(os.getpid())],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            time.sleep(0.5)  # perf attaches
            start = time.process_time()
            simulate(config(args.horizon), jobs=1)
            seconds = time.process_time() - start
        finally:
            perf.send_signal(signal.SIGINT)
            perf.wait()
        script = subprocess.run(
            ["perf", "script", "-i", str(data), "-F", "ip"], capture_output=True, text=True
        ).stdout
        listing = subprocess.run(
            ["objdump", "-D", "-b", "binary", "-m", "i386:x86-64", str(binary)],
            capture_output=True,
            text=True,
        ).stdout
    ips = [int(word, 16) for word in script.split()]
    samples = [ip - address for ip in ips]
    inside = collections.Counter(s for s in samples if 0 <= s < len(code))
    total = sum(inside.values())
    low, high = refcount_code()
    counting = sum(low <= ip < high for ip in ips)
    print(
        f"{args.algorithm} ({args.agents},{args.arms}) {args.graph} T={args.horizon}: "
        f"{seconds:.2f} s CPU; {len(samples)} samples, {total} in the {len(code) // 1024} KB of"
        f" code from the entry of {args.kernel}; {100 * counting / max(1, len(ips)):.1f}% in"
        " numba's reference counting (NRT_incref, NRT_decref)"
    )
    if not total:
        raise refuse("no sample fell in the kernel (is perf allowed to sample this process?)")
    lines = {}
    for line in listing.splitlines():
        head, _, rest = line.partition(":")
        try:
            lines[int(head.strip(), 16)] = rest.split("\t")[-1].strip()
        except ValueError:
            continue
    if args.out:  # first: a reader that stops early (| head) must not cost the listing
        with args.out.open("w") as out:
            for offset, text in sorted(lines.items()):
                out.write(f"{inside.get(offset, 0):7d} {offset:#7x}  {text}\n")
    print("\nhottest instructions (offset from the kernel's entry, % of its samples):")
    for offset, hits in inside.most_common(args.top):
        print(f"{100 * hits / total:5.1f}%  {offset:#7x}  {lines.get(offset, '?')}")
    blocks = collections.Counter({offset // 128 * 128: 0 for offset in inside})
    for offset, hits in inside.items():
        blocks[offset // 128 * 128] += hits
    print("\nblocks of 128 bytes holding at least 1% of the samples:")
    for block, hits in sorted(blocks.items()):
        if hits >= total / 100:
            print(f"{100 * hits / total:5.1f}%  {block:#7x}")


if __name__ == "__main__":
    main()
