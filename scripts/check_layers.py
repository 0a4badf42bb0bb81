#!/usr/bin/env python3
"""Checks the layering of src/ (lint stage): every #include "<dir>/..." of a file in a layer names the layer
itself or one of the layers its CMakeLists.txt lists in chorus_add_layer(... DEPS ...); only a layer declared
PUBLIC_API includes the public header; folders of src/ that are not layers (the trainer) are clients of the
public header. The compiler enforces the same rule for every compiled file (cmake/ChorusLayer.cmake); this
catches headers that nothing compiles yet. Clients (src/train) include their own folder's headers as they
like, the public header, and no layer. It also checks that the library reads the environment only through
src/base/params.cc (params.def declares every CHORUS_ variable).

Usage: check_layers.py [repository root]. Exit status 1 with one line per violation."""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
src = root / "src"
layer_re = re.compile(r"chorus_add_layer\(\s*(\w+)\s+(\w+)([^)]*)\)", re.S)
include_re = re.compile(r'^\s*#\s*include\s+"([^"/]+)/[^"]*"', re.M)
sources = {".h", ".cc", ".cu", ".cuh", ".def"}

layers = {}  # dir -> (allowed dirs, public api)
for cmake in src.glob("*/CMakeLists.txt"):
    for m in layer_re.finditer(cmake.read_text()):
        args = m.group(3).split()
        deps = []
        if "DEPS" in args:
            for a in args[args.index("DEPS") + 1:]:
                if a.isupper():
                    break
                deps.append(a)
        layers[m.group(2)] = ({m.group(2), *deps}, "PUBLIC_API" in args)

problems = []
for path in sorted(src.rglob("*")):
    if path.suffix not in sources or not path.is_file():
        continue
    rel = path.relative_to(src)
    top = rel.parts[0]
    allowed, public = layers.get(top, ({top}, True))
    layer_dirs = set(layers)
    text = path.read_text(errors="replace")
    for m in include_re.finditer(text):
        target = m.group(1)
        line = text.count("\n", 0, m.start()) + 1
        if target == "chorus":
            if not public:
                problems.append(f"src/{rel}:{line}: includes the public header; only the C API layer does")
        elif top not in layers and target in layer_dirs:
            problems.append(f"src/{rel}:{line}: src/{top} is a client of the public header, not of src/{target}")
        elif top in layers and target in layer_dirs and target not in allowed:
            problems.append(f"src/{rel}:{line}: layer {top} includes {target}/, which is not among its DEPS "
                            f"({', '.join(sorted(allowed - {top})) or 'none'})")
    if top in layers and re.search(r"\bgetenv\s*\(", text) and rel.as_posix() != "base/params.cc":
        problems.append(f"src/{rel}: reads the environment; go through base/params.h (param::text or params.def)")

for p in problems:
    print(p)
if problems:
    print(f"check_layers: {len(problems)} problem(s)")
    sys.exit(1)
print(f"check_layers: {len(layers)} layers clean")
