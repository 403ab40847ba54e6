"""``python -m mamab`` is the ``mamab`` command."""

from mamab.cli import main

main()
