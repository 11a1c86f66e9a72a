# Veil's image: the package and its dependencies at the exact versions of constraints.txt, all installed at
# build time from wheels (nothing is installed when a container starts).  The entry point is `veil`; the
# working directory holds the deployment config (deploy/veil.toml and its hierarchies): the folder belongs to the
# `veil` user Veil runs as, so what it writes there (`veil report --out report.html`, a DuckDB warehouse) can be
# written, while the config files copied into it stay root's, read-only to Veil.
#   docker build -t veil .            docker run --rm veil --version
ARG PYTHON=3.11

FROM python:${PYTHON}-slim AS wheel
WORKDIR /src
COPY pyproject.toml README.md ./
COPY engine engine
COPY sql sql
COPY migrations migrations
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM python:${PYTHON}-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1
COPY constraints.txt /tmp/constraints.txt
COPY --from=wheel /wheels /tmp/wheels
RUN pip install --no-cache-dir --only-binary :all: -c /tmp/constraints.txt /tmp/wheels/veil-*.whl \
    && rm -rf /tmp/wheels /tmp/constraints.txt \
    && useradd --create-home --uid 10001 veil \
    && install -d -o veil -g veil /srv/veil
WORKDIR /srv/veil
COPY deploy/ ./
USER veil
ENTRYPOINT ["veil"]
CMD ["--help"]
