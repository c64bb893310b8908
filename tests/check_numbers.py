"""Kept so that ``python tests/check_numbers.py NOTEBOOK ...`` still works: the checker is
``book/check_numbers.py`` (also ``python -m book.check_numbers``)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from book.check_numbers import *  # noqa: E402,F401,F403
from book.check_numbers import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
