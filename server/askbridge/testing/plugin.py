"""The askbridge pytest plugin (entry point `askbridge`): fixtures for harness tests."""
