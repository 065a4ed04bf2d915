#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Every feature bit, ioctl and io_uring command of the uapi header is
documented in Documentation/iopa.rst and in the iopa(4) man page.

  tools/check/docs-abi.py [HEADER RST MAN]   (default: the tree's)
  tools/check/docs-abi.py --self-test

- IOPA_FEAT_<X>: named in the text of the IOPA_IOC_GET_FEATURES section;
- IOPA_IOC_<X>: a section of its own (a title naming it) and a row of
  the command table;
- IOPA_URING_CMD_<X>: a row of the io_uring commands table;
- each of them named in the man page (Documentation/iopa.4).
Prints what is missing; exit status 1 if anything is.
"""
import os
import re
import sys
import tempfile

TOP = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "..", ".."))


def names(header, prefix):
    with open(header) as f:
        return sorted(set(re.findall(r"^#define\s+(%s[A-Z0-9_]+)\b" % prefix,
                                     f.read(), re.M)) -
                      {"IOPA_IOC_MAGIC"})


def sections(rst):
    """{title: body} of the document's sections (any level)."""
    lines = rst.split("\n")
    out, title, body = {}, None, []
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and re.fullmatch(r"([=\-~^])\1{2,}", nxt) and \
                len(nxt) >= len(line.rstrip()):
            if title is not None:
                out[title] = "\n".join(body)
            title, body = line.strip(), []
            continue
        body.append(line)
    if title is not None:
        out[title] = "\n".join(body)
    return out


def problems(header, rst_path, man_path):
    with open(rst_path) as f:
        rst = f.read()
    man = open(man_path).read() if os.path.exists(man_path) else ""
    secs = sections(rst)
    out = []
    feat_text = secs.get("IOPA_IOC_GET_FEATURES", "")
    for n in names(header, "IOPA_FEAT_"):
        if "``%s``" % n not in feat_text:
            out.append("%s: not described in the IOPA_IOC_GET_FEATURES "
                       "section of %s" % (n, rst_path))
    table = secs.get("ioctl commands", "")
    for n in names(header, "IOPA_IOC_"):
        if not any(re.search(r"\b%s\b" % n, t) for t in secs):
            out.append("%s: no section of its own in %s" % (n, rst_path))
        if not re.search(r"^%s\s" % n, table, re.M):
            out.append("%s: not in the table of ioctl commands" % n)
    utable = secs.get("io_uring commands", "")
    for n in names(header, "IOPA_URING_CMD_"):
        if "``%s``" % n not in utable:
            out.append("%s: not in the table of io_uring commands" % n)
    for n in (names(header, "IOPA_FEAT_") + names(header, "IOPA_IOC_") +
              names(header, "IOPA_URING_CMD_")):
        if not re.search(r"\b%s\b" % re.escape(n), man):
            out.append("%s: not in %s" % (n, man_path))
    return out


def self_test(header, rst_path, man_path):
    """An undocumented bit, ioctl or command must be reported."""
    with open(header) as f:
        h = f.read()
    h += ("\n#define IOPA_FEAT_SELFTEST\t_BITULL(62)\n"
          "#define IOPA_IOC_SELFTEST\t_IO(IOPA_IOC_MAGIC, 0x7f)\n"
          "#define IOPA_URING_CMD_SELFTEST\t_IO(IOPA_IOC_MAGIC, 0x7e)\n")
    with tempfile.NamedTemporaryFile("w", suffix=".h", delete=False) as t:
        t.write(h)
    try:
        p = problems(t.name, rst_path, man_path)
    finally:
        os.unlink(t.name)
    for n in ("IOPA_FEAT_SELFTEST", "IOPA_IOC_SELFTEST",
              "IOPA_URING_CMD_SELFTEST"):
        assert any(x.startswith(n + ":") for x in p), (n, p)
    print("docs-abi: self-test passed (undocumented names are reported)")


def main():
    args = sys.argv[1:]
    test = args[:1] == ["--self-test"]
    if test:
        args = args[1:]
    header, rst, man = args if len(args) == 3 else (
        os.path.join(TOP, "uapi/linux/iopa.h"),
        os.path.join(TOP, "Documentation/iopa.rst"),
        os.path.join(TOP, "Documentation/iopa.4"))
    if test:
        self_test(header, rst, man)
        return 0
    bad = problems(header, rst, man)
    for p in bad:
        print("FAIL: " + p)
    if not bad:
        print("ok: %d feature bits, %d ioctls, %d io_uring commands, each "
              "documented in %s and %s" % (
                  len(names(header, "IOPA_FEAT_")),
                  len(names(header, "IOPA_IOC_")),
                  len(names(header, "IOPA_URING_CMD_")),
                  os.path.relpath(rst, TOP), os.path.relpath(man, TOP)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
