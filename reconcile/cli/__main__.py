"""``python -m reconcile.cli``: the same as the ``reconcile`` command."""

from reconcile.cli import main

main()
