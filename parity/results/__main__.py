"""`python -m parity.results`: the Record's keys as docs/reference.md lists them."""

from parity.results.record import key_lines

print("\n".join(key_lines()))
