# The skillet image: ENTRYPOINT is the `skillet` CLI (compose runs `migrate` and `worker`).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    SKILLET_MIGRATIONS_DIR=/app/migrations

WORKDIR /app
COPY . .
# migrations/ is not part of the wheel: SKILLET_MIGRATIONS_DIR points `skillet migrate` at it.
RUN pip install . \
    && useradd --system --uid 10001 --home-dir /app --shell /usr/sbin/nologin skillet
USER skillet

ENTRYPOINT ["skillet"]
CMD ["worker"]
