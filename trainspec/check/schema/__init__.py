"""What the API server checks from a CRD: structural schemas, defaulting, the shipped CRD data and its
cache, and the core kinds the compiler emits beside custom resources."""
