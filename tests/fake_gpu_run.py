"""Run a script with CuPy replaced by the host emulation of tests/fake_cupy.py.

    python tests/fake_gpu_run.py bench/gpu_nqueens.py --nmin 8 --nmax 10 --no-cold

A dry run of the device scripts on a machine without a GPU (nvcc needed): it catches
errors in their Python before they cost GPU time. Times it prints mean nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
EMULATOR = HERE / "native" / "nqueens_launch_emulator.cu"


def build_emulator(folder: Path) -> dict[str, Path]:
    """The emulator libraries ("plain", "nodes", "matchsticks", "matchstick_join"), built
    with nvcc into ``folder``."""
    from fake_matchstick_join import build_library as build_join_library
    from fake_matchsticks import build_library

    built = {}
    for key, flags in (("plain", []), ("nodes", ["-DNQ_COUNT_NODES"])):
        target = folder / f"emulator_{key}.so"
        subprocess.run(["nvcc", "-O2", "-std=c++17", "-shared", "-Xcompiler", "-fPIC", *flags,
                        "-o", str(target), str(EMULATOR)], check=True, timeout=300)
        built[key] = target
    built["matchsticks"] = build_library(folder / "emulator_matchsticks.so")
    built["matchstick_join"] = build_join_library(folder / "emulator_matchstick_join.so")
    return built


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The script and its own arguments, checked before the emulator is built with nvcc."""
    parser = argparse.ArgumentParser(
        usage="%(prog)s [-h] SCRIPT [ARG ...]", description=__doc__.split("\n\n")[0],
        epilog="Everything after SCRIPT (--help included) goes to the script.")
    # optional here only so that a missing script gets its own message below
    parser.add_argument("script", metavar="SCRIPT", type=Path, nargs="?",
                        help="the Python script to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, metavar="ARG ...",
                        help="the script's own arguments")
    args = parser.parse_args(argv)
    if args.script is None:
        parser.error("give the script to run, e.g. bench/gpu_nqueens.py")
    if not args.script.is_file():
        parser.error(f"no such script: {args.script}")
    if shutil.which("nvcc") is None:
        parser.error("nvcc was not found on PATH: the emulator is built with it")
    return args


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    sys.path.insert(0, str(HERE))
    from fake_cupy import make_fake_cupy
    from fake_cupy_site import write_site

    with tempfile.TemporaryDirectory() as folder:
        libraries = build_emulator(Path(folder))
        sys.modules["cupy"] = make_fake_cupy(libraries)
        # the processes the script starts (worker processes, the GPU probe's interpreter)
        # import cupy anew: the stand-in as a package, first on their path
        site = write_site(Path(folder) / "site")
        os.environ["FAKE_CUPY_LIBRARIES"] = json.dumps({k: str(v) for k, v in libraries.items()})
        # and the script's own folder, as `python script.py` gives it (a bench script that
        # its worker processes import by name: bench/device_workers.py)
        folder_of_script = str(args.script.resolve().parent)
        os.environ["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str(site), folder_of_script, os.environ.get("PYTHONPATH")]))
        sys.path[:0] = [str(site), folder_of_script]
        sys.argv = [str(args.script), *args.args]
        runpy.run_path(str(args.script), run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
