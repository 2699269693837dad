"""Attention kernels: flash attention forward with two grid strategies (per tile and persistent)."""
