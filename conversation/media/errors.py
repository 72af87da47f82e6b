"""Errors of fetching and reading a customer's media.

SkilletError (core.errors)
└── MediaError            the media could not be read (not retryable: refused with a reply)
    ├── MediaTooLarge         over SKILLET_MEDIA_MAX_BYTES (counted while reading)
    ├── MediaUnsupported      bytes of no type we read
    ├── MediaUnavailable      the provider refused it for good (4xx, a host we do not trust)
    ├── VoiceTooLong          over SKILLET_VOICE_MAX_SECONDS: not transcribed
    ├── TranscriptEmpty       the server heard nothing
    ├── TranscriptionRejected the transcription server refused it for good (4xx)
    └── MediaTransient        a server blinked (429, 5xx, unreachable, timeout): retryable
        └── TranscriptionUnavailable  the transcription server did
"""

from __future__ import annotations

from core.errors import SkilletError


class MediaError(SkilletError):
    code = "media_unreadable"
    retryable = False


class MediaTooLarge(MediaError):
    code = "media_too_large"


class MediaUnsupported(MediaError):
    code = "media_unsupported"


class MediaUnavailable(MediaError):
    code = "media_unavailable"


class VoiceTooLong(MediaError):
    code = "voice_too_long"


class TranscriptEmpty(MediaError):
    code = "transcript_empty"


class TranscriptionRejected(MediaError):
    code = "transcription_rejected"


class MediaTransient(MediaError):
    code = "media_transient"
    retryable = True


class TranscriptionUnavailable(MediaTransient):
    code = "transcription_unavailable"
