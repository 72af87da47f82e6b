"""How a message's kind is named in pt-BR: in its description (webhook.non_text) and on
the console's thread (api.console.attendance_view), one list for both."""

from __future__ import annotations

from typing import Final

KIND_LABELS: Final[dict[str, str]] = {
    "image": "imagem",
    "audio": "áudio",
    "video": "vídeo",
    "document": "documento",
    "sticker": "figurinha",
    "location": "localização",
    "contacts": "contato",
    "reaction": "reação",
    "unsupported": "mensagem não suportada",
}
