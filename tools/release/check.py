#!/usr/bin/python3
"""tools/rh release-check: everything that names a version agrees, and the release files are complete.

  tools/release/check.py --build-dir BUILD [--library LIBRARY]

One source each: the release version is project(VERSION) in CMakeLists.txt, the C ABI version is
RH_ABI_VERSION_MAJOR/MINOR in abi/include/rh/rh.h. Checked against them:
  generated   the C++ header rh/version.hpp, the C header rh/rh_version.h, the pkg-config file and the CMake
              package version file of the build
  library     the built C ABI library's SONAME and file name, and what rh_library_version() / rh_abi_version()
              return when it is loaded
  docs        every "ABI M.N" and librenewable_huber.so.M[.N] in docs/ and README.md
  changelog   CHANGELOG.md has an Unreleased section and a dated entry for the version; that entry, or Unreleased
              for an ABI change not released yet, names the C ABI
  citation    CITATION.cff's version
  exports     the library exports exactly abi/symbols.txt (tests/abi/check_symbols.cmake)
  support     docs/support-matrix.md names the Kokkos and CUDA versions that tools/deps builds and that this build
              used
  notice      NOTICE gives the SHA-256 of every vendored file in golden/reference/, and they match
Prints one line per check and "N passed, M failed"; exits 1 on any failure (docs/release.md).
"""

import argparse
import ctypes
import glob
import hashlib
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Results:
    def __init__(self):
        self.passed = self.failed = 0

    def record(self, ok, name, detail):
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {detail}")
        self.passed += ok
        self.failed += not ok


def read(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def one(pattern, text, where):
    match = re.search(pattern, text, re.MULTILINE)
    if not match:
        raise ValueError(f"{where}: no match for {pattern!r}")
    return match.group(1)


def version_tuple(text):
    return tuple(int(part) for part in text.split("."))


def project_version():
    return one(r"^project\(\s*\w+\s+VERSION\s+([0-9]+\.[0-9]+\.[0-9]+)", read(os.path.join(ROOT, "CMakeLists.txt")),
               "CMakeLists.txt")


def abi_version():
    header = read(os.path.join(ROOT, "abi", "include", "rh", "rh.h"))
    return (int(one(r"^#define RH_ABI_VERSION_MAJOR ([0-9]+)$", header, "rh.h")),
            int(one(r"^#define RH_ABI_VERSION_MINOR ([0-9]+)$", header, "rh.h")))


def check_generated(results, build, version, abi):
    major, minor, patch = version.split(".")
    headers = {"generated/rh/version.hpp": "C++ API header", "abi/generated/rh/rh_version.h": "C ABI header"}
    for relative, what in headers.items():
        text = read(os.path.join(build, relative))
        found = {name: one(rf"^#define RH_VERSION_{name} (\S+)$", text, relative)
                 for name in ("MAJOR", "MINOR", "PATCH", "STRING")}
        ok = found == {"MAJOR": major, "MINOR": minor, "PATCH": patch, "STRING": f'"{version}"'}
        results.record(ok, f"generated {what}", f"{relative}: {found['STRING']}")
    pc = read(os.path.join(build, "abi", "renewable-huber.pc"))
    pc_version, pc_abi = one(r"^Version: (\S+)$", pc, ".pc"), one(r"C ABI ([0-9]+\.[0-9]+)", pc, ".pc")
    results.record(pc_version == version and pc_abi == f"{abi[0]}.{abi[1]}", "generated pkg-config file",
                   f"Version {pc_version}, C ABI {pc_abi}")
    config = read(os.path.join(build, "RenewableHuberConfigVersion.cmake"))
    package = one(r'set\(PACKAGE_VERSION "([^"]+)"\)', config, "RenewableHuberConfigVersion.cmake")
    results.record(package == version, "generated CMake package version", package)


def check_library(results, library, version, abi):
    dynamic = subprocess.run(["objdump", "-p", library], capture_output=True, text=True, check=True).stdout
    soname = one(r"^\s*SONAME\s+(\S+)$", dynamic, "objdump -p")
    real = os.path.basename(os.path.realpath(library))
    ok = soname == f"librenewable_huber.so.{abi[0]}" and real == f"librenewable_huber.so.{abi[0]}.{abi[1]}"
    results.record(ok, "library SONAME and file", f"{soname}, {real}")
    loaded = ctypes.CDLL(os.path.realpath(library))
    loaded.rh_library_version.restype = ctypes.c_char_p
    loaded.rh_abi_version.restype = ctypes.c_uint32
    reported = loaded.rh_library_version().decode()
    packed = loaded.rh_abi_version()
    ok = reported == version and packed == (abi[0] << 16 | abi[1])
    results.record(ok, "library at run time",
                   f"rh_library_version() {reported}, rh_abi_version() {packed >> 16}.{packed & 0xFFFF}")


def check_docs(results, abi):
    texts = {os.path.relpath(p, ROOT): read(p) for p in [os.path.join(ROOT, "README.md")] +
             sorted(glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True))}
    wrong = []
    for name, text in texts.items():
        # Quoted output (code spans and blocks: messages, examples) may name other versions on purpose.
        text = re.sub(r"```.*?```|`[^`\n]*`", "", text, flags=re.S)
        for match in re.finditer(r"\bABI ([0-9]+)\.([0-9]+)\b", text):
            if (int(match.group(1)), int(match.group(2))) != abi:
                wrong.append(f"{name}: '{match.group(0)}'")
        for match in re.finditer(r"librenewable_huber\.so\.([0-9]+)(?:\.([0-9]+))?", text):
            if int(match.group(1)) != abi[0] or (match.group(2) and int(match.group(2)) != abi[1]):
                wrong.append(f"{name}: '{match.group(0)}'")
    results.record(not wrong, "ABI version in the docs",
                   f"all agree with {abi[0]}.{abi[1]}" if not wrong else "; ".join(wrong[:5]))


def check_changelog(results, version, abi):
    text = read(os.path.join(ROOT, "CHANGELOG.md"))
    unreleased = re.search(r"^## \[Unreleased\]", text, re.MULTILINE)
    entry = re.search(rf"^## \[{re.escape(version)}\] - [0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}$(.*?)(?=^## |\Z)", text,
                      re.MULTILINE | re.DOTALL)
    # The release entry names the C ABI it ships; an ABI change not released yet is named under Unreleased.
    unreleased_text = re.search(r"^## \[Unreleased\]$(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    names_abi = (bool(entry) and f"C ABI {abi[0]}.{abi[1]}" in entry.group(1)) or \
        (bool(unreleased_text) and f"C ABI {abi[0]}.{abi[1]}" in unreleased_text.group(1))
    results.record(bool(unreleased and entry and names_abi), "CHANGELOG.md",
                   f"Unreleased section {'present' if unreleased else 'MISSING'}; "
                   f"entry '## [{version}] - DATE' {'present' if entry else 'MISSING'}"
                   f"{'' if names_abi else ', not naming C ABI ' + str(abi[0]) + '.' + str(abi[1])}")


def check_citation(results, version):
    cited = one(r'^version: "?([^"\s]+)"?$', read(os.path.join(ROOT, "CITATION.cff")), "CITATION.cff")
    results.record(cited == version, "CITATION.cff", f"version {cited}")


def check_exports(results, library, nm):
    run = subprocess.run(["cmake", f"-DNM={nm}", f"-DLIBRARY={library}",
                          f"-DSYMBOLS={os.path.join(ROOT, 'abi', 'symbols.txt')}",
                          "-P", os.path.join(ROOT, "tests", "abi", "check_symbols.cmake")],
                         capture_output=True, text=True)
    message = (run.stdout + run.stderr).strip().replace("\n", " ")
    results.record(run.returncode == 0, "exports", re.sub(r"^-- ", "", message))


def package_version(config_dir, package):
    """The version of an installed CMake package (its <Package>ConfigVersion.cmake), or None."""
    for name in (f"{package}ConfigVersion.cmake", f"{package.lower()}-config-version.cmake"):
        path = os.path.join(config_dir, name)
        if os.path.exists(path):
            return one(r'set\(PACKAGE_VERSION "([^"]+)"\)', read(path), path)
    return None


def check_support_matrix(results, build):
    matrix = read(os.path.join(ROOT, "docs", "support-matrix.md"))
    named = {version_tuple(v) for v in re.findall(r"(?<![0-9.])([0-9]+\.[0-9]+(?:\.[0-9]+)?)(?![0-9])", matrix)}
    wanted = {
        "Kokkos built by tools/deps/kokkos.sh":
            one(r'^KOKKOS_VERSION="([^"]+)"', read(os.path.join(ROOT, "tools", "deps", "kokkos.sh")), "kokkos.sh"),
        "CUDA toolkit of tools/deps/cuda.sh":
            one(r"^RH_CUDA_TOOLKIT_VERSION=([0-9.]+)", read(os.path.join(ROOT, "tools", "deps", "cuda.sh")),
                "cuda.sh"),
    }
    cache = read(os.path.join(build, "CMakeCache.txt"))
    for package in ("Kokkos", "KokkosKernels"):
        directory = re.search(rf"^{package}_DIR:PATH=(.+)$", cache, re.MULTILINE)
        found = directory and package_version(directory.group(1), package)
        if found:
            wanted[f"{package} of this build"] = found
    missing = [f"{what} {v}" for what, v in wanted.items() if version_tuple(v) not in named]
    results.record(not missing, "docs/support-matrix.md",
                   "names " + ", ".join(f"{what} {v}" for what, v in wanted.items()) if not missing
                   else "does not name " + "; ".join(missing))


def check_notice(results):
    notice = read(os.path.join(ROOT, "NOTICE"))
    problems = []
    vendored = sorted(glob.glob(os.path.join(ROOT, "golden", "reference", "*")))
    for path in vendored:
        relative = os.path.relpath(path, ROOT)
        with open(path, "rb") as handle:
            digest = hashlib.sha256(handle.read()).hexdigest()
        if not re.search(rf"^{re.escape(relative)}\s+\(SHA-256 {digest}\)", notice, re.MULTILINE):
            problems.append(f"{relative} (SHA-256 {digest[:12]}...) not listed as it is")
    results.record(bool(vendored) and not problems, "NOTICE",
                   f"{len(vendored)} vendored files listed with their SHA-256" if not problems else "; ".join(problems))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", required=True, help="a configured and built build directory")
    parser.add_argument("--library", help="the C ABI library (default: BUILD/abi/librenewable_huber.so)")
    parser.add_argument("--nm", default="nm")
    args = parser.parse_args()
    build = os.path.abspath(args.build_dir)
    library = args.library or os.path.join(build, "abi", "librenewable_huber.so")
    results = Results()
    version, abi = project_version(), abi_version()
    print(f"release {version}, C ABI {abi[0]}.{abi[1]} (CMakeLists.txt project(VERSION), abi/include/rh/rh.h)")
    checks = [lambda: check_generated(results, build, version, abi),
              lambda: check_library(results, library, version, abi),
              lambda: check_docs(results, abi),
              lambda: check_changelog(results, version, abi),
              lambda: check_citation(results, version),
              lambda: check_exports(results, library, args.nm),
              lambda: check_support_matrix(results, build),
              lambda: check_notice(results)]
    for check in checks:
        try:
            check()
        except (OSError, ValueError, subprocess.CalledProcessError) as error:
            results.record(False, "error", str(error))
    print(f"{results.passed} passed, {results.failed} failed")
    return 1 if results.failed else 0


if __name__ == "__main__":
    sys.exit(main())
