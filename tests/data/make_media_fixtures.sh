#!/bin/sh
# How tests/data/voice_note_pt.ogg was made (Debian: apt-get install espeak-ng opus-tools):
# a Portuguese sentence spoken by espeak-ng, encoded as WhatsApp encodes a voice note
# (Ogg/Opus, mono, 16 kHz speech, low bitrate). The PDF and PNG fixtures are made by the tests
# in Python (tests/media_fixtures.py).
set -eu
cd "$(dirname "$0")"
espeak-ng -v pt-br -s 150 -w /tmp/voice_note_pt.wav "Oi, qual o prazo de entrega para São Paulo?"
opusenc --quiet --bitrate 16 --downmix-mono /tmp/voice_note_pt.wav voice_note_pt.ogg
rm -f /tmp/voice_note_pt.wav
