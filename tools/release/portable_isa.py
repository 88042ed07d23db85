#!/usr/bin/python3
"""Fails when a library would need a newer x86-64 CPU than the baseline: the portable-build check.

  tools/release/portable_isa.py LIBRARY... [--allow FILE]

Disassembles each library (objdump -d) and reports every instruction of x86-64-v3 or v4 -- AVX, AVX2, FMA, F16C
(VEX-encoded), AVX-512 (EVEX, zmm and mask registers), BMI1/BMI2/LZCNT/MOVBE -- outside the functions listed in
the allow-list. A library built without -march=native has none: any such instruction dies with SIGILL on an older
CPU. The allow-list (tools/release/runtime_dispatched.txt) names functions that are only called after a run-time
check of the CPU's features; each line is a demangled function name as objdump prints it, or a prefix of one
ending in `*`. An allowed function may hold AVX/AVX2 but no FMA and no AVX-512: the dispatched copies must round
exactly as the baseline code does (rh/detail/host_isa.hpp).
Exit status: 0 clean, 1 instructions found, 2 usage or objdump failure.
"""

import argparse
import collections
import os
import re
import subprocess
import sys

DEFAULT_ALLOW = os.path.join(os.path.dirname(os.path.abspath(__file__)), "runtime_dispatched.txt")

# Operands only AVX-512 has: zmm, the opmask registers k0-k7, vector registers 16-31, {masking}/{broadcast}.
AVX512_OPERAND = re.compile(r"%(?:zmm[0-9]+|k[0-7]|[xy]mm(?:1[6-9]|2[0-9]|3[01]))\b|\{")
# Registers that AVX and later have: ymm.
WIDE_REGISTER = re.compile(r"%ymm[0-9]+\b")
# Mnemonics starting with "v" are VEX/EVEX vector instructions, except these (virtualization, segment checks).
NOT_VECTOR = re.compile(r"^(?:vm[a-z]*|verr|verw)$")
# Scalar instructions of x86-64-v3. (tzcnt is left out: it decodes as bsf on older CPUs, and GCC emits it for
# generic x86-64 where a zero input cannot occur.)
V3_SCALAR = {"andn", "bextr", "blsi", "blsmsk", "blsr", "bzhi", "mulx", "pdep", "pext", "rorx", "sarx", "shlx",
             "shrx", "lzcnt", "movbe"}

FUNCTION = re.compile(r"^[0-9a-f]+ <(.+)>:$")
INSTRUCTION = re.compile(r"^\s*[0-9a-f]+:\s+([a-z][a-z0-9.]*)\s*(.*)$")


# Fused multiply-add (FMA3/FMA4): one rounding where the baseline code rounds twice.
FUSED = re.compile(r"^v(?:fn?m(?:add|sub)|fmaddsub|fmsubadd)")


def category(mnemonic, operands):
    """Why an instruction is beyond the baseline, or None."""
    operands = operands.split("#")[0].split("<")[0]   # drop objdump's comments and symbol names ({lambda()#1})
    if AVX512_OPERAND.search(operands):
        return "AVX-512"
    if WIDE_REGISTER.search(operands):
        return "AVX/AVX2 (ymm)"
    if mnemonic.startswith("v") and not NOT_VECTOR.match(mnemonic):
        return "AVX/AVX2/FMA (VEX-encoded)"
    if mnemonic in V3_SCALAR:
        return "BMI/LZCNT/MOVBE"
    return None


def is_allowed(function, allowed):
    return function in allowed["exact"] or any(function.startswith(prefix) for prefix in allowed["prefixes"])


def scan(library, allowed):
    """{function: Counter of categories} for the functions outside `allowed` that hold such instructions, and for
    the allowed ones that hold FMA or AVX-512."""
    process = subprocess.Popen(["objdump", "-d", "-C", "--no-show-raw-insn", library], stdout=subprocess.PIPE,
                               text=True, errors="replace")
    found = collections.defaultdict(collections.Counter)
    function = "?"
    for line in process.stdout:
        header = FUNCTION.match(line)
        if header:
            function = header.group(1)
            continue
        instruction = INSTRUCTION.match(line)
        if not instruction:
            continue
        kind = category(instruction.group(1), instruction.group(2))
        if not kind:
            continue
        if not is_allowed(function, allowed):
            found[function][kind] += 1
        elif FUSED.match(instruction.group(1)):
            found[function]["FMA in a dispatched function"] += 1
        elif kind == "AVX-512":
            found[function]["AVX-512 in a dispatched function"] += 1
    if process.wait() != 0:
        raise RuntimeError(f"objdump -d {library} failed")
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("libraries", nargs="+")
    parser.add_argument("--allow", default=DEFAULT_ALLOW, help="allow-list of run-time dispatched functions")
    args = parser.parse_args()
    with open(args.allow, encoding="utf-8") as handle:
        names = [line.rstrip("\n") for line in handle if line.strip() and not line.startswith("#")]
    allowed = {"exact": {name for name in names if not name.endswith("*")},
               "prefixes": [name[:-1] for name in names if name.endswith("*")]}
    failed = False
    for library in args.libraries:
        try:
            found = scan(library, allowed)
        except (OSError, RuntimeError) as error:
            print(f"portable_isa: {error}", file=sys.stderr)
            return 2
        total = collections.Counter()
        for counts in found.values():
            total.update(counts)
        name = os.path.basename(library)
        if not found:
            print(f"ok   {name}: no instruction beyond baseline x86-64 outside the dispatched functions "
                  f"({len(names)} allow-list entries), and no FMA or AVX-512 in those")
            continue
        failed = True
        print(f"FAIL {name}: {sum(total.values())} instructions beyond baseline x86-64 in {len(found)} functions "
              f"({', '.join(f'{kind} {count}' for kind, count in total.most_common())}); the first:")
        for function, counts in sorted(found.items(), key=lambda item: -sum(item[1].values()))[:10]:
            print(f"     {sum(counts.values()):6d}  {function[:150]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
