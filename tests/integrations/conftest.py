"""Mem0 reads its settings when imported: telemetry off, its files in a folder removed at exit."""

from readmit.bench.backends.mem0_bank import quiet_home

quiet_home()
