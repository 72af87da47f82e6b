"""Byte units, so every limit reads in the unit it was chosen in (`8 * BYTES_PER_KIB`)."""

BYTES_PER_KIB = 1024
BYTES_PER_MIB = 1024 * BYTES_PER_KIB
