"""Record and replay: check a real workload's Triton launches without writing a spec.

- parity.record.command: `parity record -- CMD` runs any command with the recorder installed
  (parity.record.hook, parity.record.capture) and writes one bundle (parity.record.bundle);
- parity.record.replay: each kept launch of a bundle as a case of a KernelSpec, for `--replay BUNDLE`
  on every tier.
"""
