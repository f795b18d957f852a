"""Public helpers for headless harness tests of askbridge (filled by the bridge issue)."""
