"""trainspec.dsl.framework.hints evaluates an annotation of names joined by ``|`` without parsing
it: the result, the lookup order (the module's names, the class's, the builtins) and the error for
an unknown name must be eval's."""

from __future__ import annotations

import pytest

from trainspec.dsl.framework import hints

MODULE = {"Shared": int, "OnlyModule": bytes}
SCOPE = {"Shared": float, "OnlyClass": complex}
TEXTS = [
    "Shared",
    "OnlyModule",
    "OnlyClass",
    "str",
    "str | None",
    "None | Shared | OnlyClass",
    "None",
    "list[str]",
    "dict[str, Shared] | None",
]


@pytest.mark.parametrize("text", TEXTS)
def test_an_annotation_is_what_eval_makes_of_it(text: str) -> None:
    assert hints._evaluated(text, dict(SCOPE), MODULE) == eval(text, dict(SCOPE), MODULE)  # noqa: S307 (the reference)


@pytest.mark.parametrize("text", ["Missing", "str | Missing"])
def test_an_unknown_name_fails_as_eval_fails(text: str) -> None:
    with pytest.raises(NameError) as expected:
        eval(text, dict(SCOPE), MODULE)  # noqa: S307 (the reference)
    with pytest.raises(NameError) as got:
        hints._evaluated(text, dict(SCOPE), MODULE)
    assert str(got.value) == str(expected.value) and got.value.name == expected.value.name
