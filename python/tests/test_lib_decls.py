# SPDX-License-Identifier: MIT
# python/bach/_lib.py declares libbach's functions, structs, enums and
# constants by hand for cffi, which takes them on trust: a declaration that
# drifts from the public headers reads wrong values or crashes, and nothing
# else would say so. The C compiler is the judge here: a translation unit
# that includes the headers the Makefile installs (PUBLIC_HEADERS) and then
# repeats each function of the cdef, word for word (a redeclaration that is
# not the same type is an error), and asserts, for each struct, enum and
# constant, the sizes, offsets, field types and values cffi computed from
# the cdef. The other way round, every enumerator and field those enums
# and structs have in the headers must be in the cdef, and everything the
# module calls declared in it and exported by the library.
import fnmatch
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from bach._lib import CDEF, ffi, lib

TOP = Path(__file__).resolve().parents[2]
CC = os.environ.get("CC") or "cc"
CFLAGS = ["-std=gnu11", "-D_GNU_SOURCE", "-I", str(TOP / "include")]


def public_headers():
    """The installed headers: every header of include/bach, which the
    Makefile's PUBLIC_HEADERS installs whole."""
    text = (TOP / "Makefile").read_text()
    m = re.search(r"^PUBLIC_HEADERS\s*=\s*(.*)$", text, re.M)
    assert m and m.group(1).strip() == "$(wildcard include/bach/*.h)", \
        "Makefile: PUBLIC_HEADERS is not include/bach whole"
    names = sorted(p.name for p in (TOP / "include" / "bach").glob("*.h"))
    assert "bach.h" in names, names
    return ["bach/" + n for n in names]


def includes():
    return "".join("#include <%s>\n" % h for h in public_headers())


def cc(source, *args):
    if not shutil.which(CC):
        pytest.fail("no C compiler %r to check the declarations with" % CC)
    return subprocess.run([CC, *CFLAGS, *args, "-x", "c", "-"],
                          input=source, capture_output=True, text=True)


def preprocessed():
    """The public headers as the compiler reads them (no comments, no
    macros): where their enums and structs are read from."""
    p = cc(includes(), "-E", "-P")
    assert p.returncode == 0, p.stderr
    return p.stdout


def declarations():
    """The cdef, split into its top-level declarations: (kind, name,
    text), kind one of define, struct, enum, opaque, function."""
    text = re.sub(r"/\*.*?\*/", " ", CDEF, flags=re.S)
    out = []
    for m in re.finditer(r"^\s*#define\s+(\w+)\s+(.+)$", text, re.M):
        out.append(("define", m.group(1), m.group(0).strip()))
    text = re.sub(r"^\s*#.*$", "", text, flags=re.M)
    for decl in re.findall(r"[^;{}]*(?:\{[^}]*\})?[^;{}]*;", text):
        decl = " ".join(decl.split())
        m = re.match(r"(struct|enum) (\w+) \{", decl)
        if m:
            out.append((m.group(1), m.group(2), decl))
        elif re.fullmatch(r"struct \w+ ;|struct \w+;", decl):
            out.append(("opaque", decl.split()[1].rstrip(";"), decl))
        else:
            m = re.search(r"(\w+)\s*\(", decl)
            assert m, "cannot read the cdef's declaration %r" % decl
            out.append(("function", m.group(1), decl))
    return out


def body(kind, name, text):
    """The members of `kind name { ... }` in text, or None."""
    m = re.search(r"\b%s\s+%s\s*\{([^{}]*)\}" % (kind, name), text)
    return m and m.group(1)


def enumerators(members):
    return [e.split("=")[0].strip() for e in members.split(",") if e.strip()]


def fields(members):
    """{field name: its type}, from plain declarations such as
    "uint64_t at;" or "char cause[16];"."""
    out = {}
    for decl in filter(None, (d.strip() for d in members.split(";"))):
        m = re.fullmatch(r"(.*?[\s*])(\w+)\s*((?:\[[^\]]*\]\s*)*)", decl)
        assert m and "," not in decl, "cannot read the field %r" % decl
        out[m.group(2)] = (m.group(1).strip() + m.group(3)).strip()
    return out


def test_the_cdef_is_what_the_headers_declare():
    decls = declarations()
    assert [d for d in decls if d[0] == "function"], "no function in the cdef"
    hdr = preprocessed()
    src = [includes(), "#include <stddef.h>\n#include <stdlib.h>\n"]
    wrong = []
    for kind, name, text in decls:
        if kind == "define":
            src.append("#ifndef %s\n#error %s: not in the headers\n#endif\n"
                       % (name, name))
            src.append("_Static_assert((%s) == %dull, \"%s is not %d\");\n"
                       % (name, getattr(lib, name), name, getattr(lib, name)))
        elif kind == "opaque":
            if not re.search(r"\bstruct %s\b" % name, hdr):
                wrong.append("struct %s: not in the headers" % name)
        elif kind == "enum":
            mine = enumerators(body("enum", name, text))
            theirs = enumerators(body("enum", name, hdr) or "")
            if mine != theirs:
                wrong.append("enum %s: the cdef has %s, the headers %s"
                             % (name, mine, theirs))
            for e, v in ffi.typeof("enum %s" % name).relements.items():
                src.append("_Static_assert(%s == %d, \"%s is not %d\");\n"
                           % (e, v, e, v))
        elif kind == "struct":
            mine = fields(body("struct", name, text))
            theirs = list(fields(body("struct", name, hdr) or ""))
            if list(mine) != theirs:
                wrong.append("struct %s: the cdef has fields %s, the headers "
                             "%s" % (name, list(mine), theirs))
            t = "struct %s" % name
            src.append("_Static_assert(sizeof(%s) == %d, \"sizeof(%s) is "
                       "not %d\");\n" % (t, ffi.sizeof(t), t, ffi.sizeof(t)))
            for f, ft in mine.items():
                off = ffi.offsetof(t, f)
                src.append("_Static_assert(offsetof(%s, %s) == %d, \"%s.%s "
                           "is not at %d\");\n" % (t, f, off, t, f, off))
                src.append("_Static_assert(__builtin_types_compatible_p("
                           "__typeof__(((%s *)0)->%s), %s), \"%s.%s is not "
                           "%s\");\n" % (t, f, ft, t, f, ft))
        else:
            # declared by the headers (else "undeclared"), then again as
            # the cdef says (else "conflicting types")
            src.append("void *seen_%s = (void *)%s;\n%s\n"
                       % (name, name, text))
    p = cc("".join(src), "-fsyntax-only", "-Werror")
    if p.returncode:
        wrong.append(p.stderr)
    assert not wrong, "the cdef of python/bach/_lib.py differs from the " \
        "public headers:\n" + "\n".join(wrong)


def exported():
    """The names and patterns lib/libbach.map exports (global:)."""
    text = re.sub(r"/\*.*?\*/", " ", (TOP / "lib" / "libbach.map").read_text(),
                  flags=re.S)
    out = []
    for sec in re.findall(r"global:(.*?)(?:local:|\})", text, re.S):
        out += re.findall(r"([\w*]+)\s*;", sec)
    return out


def test_what_the_module_calls_is_declared_and_exported():
    used = set()
    for py in (TOP / "python" / "bach").glob("*.py"):
        used |= set(re.findall(r"\blib\.([A-Za-z_]\w*)", py.read_text()))
    assert used, "found no lib.NAME in python/bach"
    declared = set()
    for kind, name, text in declarations():
        declared.add(name)
        if kind == "enum":
            declared |= set(enumerators(body("enum", name, text)))
    assert used <= declared, "used by python/bach, not in the cdef: %s" % (
        sorted(used - declared))
    patterns = exported()
    assert patterns, "lib/libbach.map exports nothing?"
    for kind, name, _ in declarations():
        if kind != "function" or name == "free":
            continue
        assert any(fnmatch.fnmatchcase(name, p) for p in patterns), \
            "%s: in the cdef, not exported by lib/libbach.map" % name
        # and the library loaded has it (cffi looks it up by name)
        assert getattr(lib, name) is not None
