# The skillet image: ENTRYPOINT is the `skillet` CLI (compose runs `migrate` and `worker`).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY . .
# The wheel carries skillet_data/ (migrations and catalog): no SKILLET_MIGRATIONS_DIR needed.
RUN pip install . \
    && useradd --system --uid 10001 --home-dir /app --shell /usr/sbin/nologin skillet
USER skillet

ENTRYPOINT ["skillet"]
CMD ["worker"]
