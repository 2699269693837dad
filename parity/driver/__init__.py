"""The driver: the phases each case and each run end go through, in order (parity.driver.pipeline), its progress line
and its shards; parity.plugin adapts pytest to it."""
