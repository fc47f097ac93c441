"""``trainspec explain``: what a job resolves to, where each value came from, and what it costs.

``estimate`` holds the arithmetic, ``model`` builds an :class:`~trainspec.explain.explanation.Explanation`
from a compiled plan, and the ``render_*`` modules print it as text, markdown, JSON or Mermaid.
"""

from trainspec.explain.explanation import Explanation, explain_plan

__all__ = ["Explanation", "explain_plan", "render"]

#: Output formats and the module that renders each.
FORMATS = {
    "text": "trainspec.explain.render_text",
    "markdown": "trainspec.explain.render_markdown",
    "json": "trainspec.explain.render_json",
    "mermaid": "trainspec.explain.render_mermaid",
}


def render(explanations: list[Explanation], fmt: str = "text") -> str:
    """Render ``explanations`` in ``fmt`` (one of :data:`FORMATS`)."""
    import importlib

    return importlib.import_module(FORMATS[fmt]).render(explanations)
