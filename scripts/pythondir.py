#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Print where `make install` puts the npuring Python package for PREFIX:
the purelib directory of this interpreter's install scheme for PREFIX, in
Debian's spelling where Debian's interpreter has one (dist-packages).
Usage: pythondir.py PREFIX"""
import sys
import sysconfig

prefix = sys.argv[1].rstrip("/") if len(sys.argv) > 1 else "/usr/local"
schemes = sysconfig.get_scheme_names()
if prefix == "/usr" and "deb_system" in schemes:
    # Debian's own packages: /usr/lib/python3/dist-packages
    print(sysconfig.get_path("purelib", "deb_system"))
elif prefix == "/usr/local" and "posix_local" in schemes:
    # Debian's local installs: /usr/local/lib/python3.X/dist-packages
    print(sysconfig.get_path("purelib", "posix_local",
                             vars={"base": "/usr"}))
else:
    print(sysconfig.get_path("purelib", "posix_prefix",
                             vars={"base": prefix, "platbase": prefix}))
