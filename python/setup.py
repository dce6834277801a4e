"""setup.py: copies the libburrow.so that make built (../build, or $BURROW_BUILD) into the package,
so that `pip install ./python` after `make` gives a package that loads it without a compiler."""
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


class build_py_with_lib(build_py):
    def run(self):
        super().run()
        build = os.environ.get("BURROW_BUILD", os.path.join(HERE, "..", "build"))
        so = os.path.realpath(os.path.join(build, "libburrow.so"))
        if not os.path.exists(so):
            raise SystemExit("burrow: %s not found: run make first (or set BURROW_BUILD)" % so)
        shutil.copy(so, os.path.join(self.build_lib, "burrow", "libburrow.so.0"))


setup(cmdclass={"build_py": build_py_with_lib})
