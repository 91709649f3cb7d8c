"""What loading the runtime costs a serving worker: time and resident memory of
`import mla`, of opening a `hip` device (failing cleanly without a GPU) and of getting a
decode kernel (from a bundle when MLA_KERNEL_BUNDLE points at one, else the kernel cache
or the compiler), and which large shared libraries the process has mapped after each step.

    PYTHONPATH=build/python /usr/bin/python3 bench/deploy/runtime_cost.py [--heads 12 --qlen 1]
    /usr/bin/python3 bench/deploy/runtime_cost.py --cpp-runtime build/lib/libmla.so

With --cpp-runtime the process loads only the C++ runtime library (ctypes), as a C++
engine that opens no emulator would, and reports that step instead.

Each step's figures are printed as measured in this process (wall time of the step, VmRSS
after it); docs/deployment.md records them with the machine's load.
"""
import argparse
import time

start = time.perf_counter()


def rss_mib():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def big_libraries():
    names = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            for lib in ("libMLIR", "libLLVM", "libmla_compiler", "libmla.so", "libmla_emu",
                        "libtorch"):
                if lib in path:
                    names.add(lib)
    return ", ".join(sorted(names)) or "none"


def report(step, t0):
    print(f"{step:<34} {1000 * (time.perf_counter() - t0):8.1f} ms  "
          f"VmRSS {rss_mib():7.1f} MiB  mapped: {big_libraries()}")


parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--heads", type=int, default=12)
parser.add_argument("--qlen", type=int, default=1)
parser.add_argument("--cpp-runtime", metavar="LIBMLA",
                    help="load only this libmla.so (ctypes) and report that step")
args = parser.parse_args()

report("python start", start)
if args.cpp_runtime:
    import ctypes  # noqa: E402

    t0 = time.perf_counter()
    ctypes.CDLL(args.cpp_runtime)
    report("load libmla.so (C++ runtime)", t0)
    raise SystemExit(0)
t0 = time.perf_counter()
import mla  # noqa: E402

report("import mla", t0)
t0 = time.perf_counter()
try:
    mla.runtime.Device("hip")
    outcome = "opened"
except Exception as error:  # noqa: BLE001 - the runtime's error
    outcome = f"refused ({str(error).splitlines()[0][:60]}...)"
report("open 'hip' device: " + outcome.split(" ")[0], t0)
t0 = time.perf_counter()
device = mla.runtime.Device("emu")
report("open 'emu' device", t0)
t0 = time.perf_counter()
decoder = mla.Decoder(heads=args.heads, qlen=args.qlen, device=device)
report(f"Decoder({args.heads}, {args.qlen}): {decoder.kernel_source}", t0)
