"""The spec language: models, the strict YAML loader, diagnostics. Imports nothing else of trainspec."""
