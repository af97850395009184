"""``python -m reconcile.cli``: the same as the ``reconcile`` command."""

from . import main

main()
