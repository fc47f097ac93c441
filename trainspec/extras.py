"""How to install one of trainspec's extras, said the same way by every command that needs one.

No package index serves trainspec yet, so ``pip install 'trainspec[kube]'`` alone would send a
user to a 404: the hint names the in-place form as well (``pip install '.[kube]'`` in a clone,
or the wheel's path with the extra), as the README's "Installing" section does.
"""

from __future__ import annotations


def install_hint(extra: str, what: str = "") -> str:
    """``pip install 'trainspec[EXTRA]'`` with the clone form and where the README says more."""
    need = f"{what}: " if what else ""
    return (
        f"{need}pip install 'trainspec[{extra}]' where trainspec came from "
        f"(in a clone: pip install '.[{extra}]'; from a wheel: pip install 'dist/trainspec-...whl[{extra}]'; "
        "README: Installing)"
    )
