"""Benchmarks: decision quality on LoCoMo, latency, store speed."""
