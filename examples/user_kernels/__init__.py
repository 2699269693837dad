"""An example user kernel package: parity runs it through every tier with --kernels."""
