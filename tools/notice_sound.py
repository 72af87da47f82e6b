"""Write api/console/static/aviso.wav: the console's notification sound, made here (never
downloaded): two short sine notes (E6 then A6) with soft edges, 16 kHz mono 16-bit, 0.3 s.

Deterministic: the same code writes the same bytes. Run from the repo root:
  .venv/bin/python tools/notice_sound.py
"""

from __future__ import annotations

import math
import struct
import sys
import wave
from pathlib import Path

RATE_HZ = 16_000
NOTES = ((1318.5, 0.12), (1760.0, 0.18))  # (frequency Hz, seconds)
FADE_S = 0.01  # a ramp at each note's ends: no click
VOLUME = 0.35
OUT = Path(__file__).resolve().parent.parent / "api" / "console" / "static" / "aviso.wav"


def samples() -> list[int]:
    out: list[int] = []
    for frequency, seconds in NOTES:
        count, fade = int(RATE_HZ * seconds), int(RATE_HZ * FADE_S)
        for n in range(count):
            edge = min(1.0, n / fade, (count - 1 - n) / fade)
            decay = math.exp(-3.0 * n / count)
            value = VOLUME * edge * decay * math.sin(2 * math.pi * frequency * n / RATE_HZ)
            out.append(round(value * 32767))
    return out


def main() -> int:
    with wave.open(str(OUT), "wb") as file:
        file.setnchannels(1)
        file.setsampwidth(2)
        file.setframerate(RATE_HZ)
        data = samples()
        file.writeframes(struct.pack(f"<{len(data)}h", *data))
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
