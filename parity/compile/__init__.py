"""The compile path: compile-only warmups, the compile counter, isolation and specialization."""
