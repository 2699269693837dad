"""The perf pass: after the accuracy pass, time each perf case alone on the device against the measured roof."""
