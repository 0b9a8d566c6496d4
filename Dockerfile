# syntax=docker/dockerfile:1
#
# merchantd container image (BuildKit: the default builder of current Docker releases).
#
#   docker build -t merchantd:0.1.0 .
#   docker run --rm -p 8080:8080 -p 9090:9090 merchantd:0.1.0          # SQLite in /var/lib/merchantd
#   docker run --rm -p 8080:8080 -e MERCHANTD_DATABASE_URL=postgres://... merchantd:0.1.0
#   docker run --rm -e MERCHANTD_DATABASE_URL=postgres://... merchantd:0.1.0 migrate
#
# The runtime is Debian slim, the same Debian release as the builder (so the same glibc). It has
# /bin/sleep for the Helm chart's optional `preStop.mode=exec` and a shell for debugging. The
# chart's default preStop uses Kubernetes' own sleep action and needs nothing from the image, so
# the same binary also runs on gcr.io/distroless/cc-debian12. The binary links no TLS library and
# bundles SQLite, so the runtime needs no extra packages.

# No HEALTHCHECK: Kubernetes ignores it and probes /health/live and /health/ready itself (see the
# chart), and a Docker healthcheck would need an HTTP client in the image.
# checkov:skip=CKV_DOCKER_2:Kubernetes ignores HEALTHCHECK and probes /health/* itself; a Docker healthcheck would need an HTTP client in the image

ARG RUST_VERSION=1.95

FROM rust:${RUST_VERSION}-bookworm AS build
WORKDIR /src
# Only what the build reads (see .dockerignore): the workspace's members (every crate under src/,
# and the fuzz targets' manifest and sources, which cargo loads though it does not build them),
# the bench targets Cargo.toml declares, and the migrations, compiled in by the storage crate's
# build script. The production allocator is jemalloc (`--features jemalloc`, Cargo.toml).
COPY Cargo.toml Cargo.lock ./
COPY fuzz/Cargo.toml ./fuzz/Cargo.toml
COPY fuzz/fuzz_targets ./fuzz/fuzz_targets
COPY benches ./benches
COPY migrations ./migrations
COPY src ./src
RUN --mount=type=cache,target=/usr/local/cargo/registry,sharing=locked \
    --mount=type=cache,target=/src/target,sharing=locked \
    cargo build --release --locked --features jemalloc --bin merchantd \
    && install -D -m 0755 target/release/merchantd /out/merchantd \
    && strip /out/merchantd
# The image's default configuration: listen on every interface (a container's loopback is of no
# use), /metrics on its own port, SQLite under /var/lib/merchantd unless MERCHANTD_DATABASE_URL
# says otherwise, tenant manifests from /etc/merchantd/tenants (empty: mount yours there), JSON
# logs. Every key can be overridden with MERCHANTD_<KEY> (docs/configuration.md).
RUN printf '%s\n' \
      'bind = "0.0.0.0:8080"' \
      'metrics_bind = "0.0.0.0:9090"' \
      'database_url = "sqlite:///var/lib/merchantd/merchantd.db"' \
      'tenants = "/etc/merchantd/tenants"' \
      'log_format = "json"' \
      > /out/merchantd.toml

FROM debian:bookworm-slim AS runtime
ARG UID=10001
RUN groupadd --system --gid "${UID}" merchantd \
    && useradd --system --uid "${UID}" --gid "${UID}" --home-dir /var/lib/merchantd \
       --no-create-home --shell /usr/sbin/nologin merchantd \
    && install -d -m 0755 /etc/merchantd /etc/merchantd/tenants \
    && install -d -m 0750 -o "${UID}" -g "${UID}" /var/lib/merchantd

COPY --from=build /out/merchantd /usr/local/bin/merchantd
# For reference only (for example a DBA reviewing the schema): the binary carries its own copy.
COPY --from=build /src/migrations /usr/share/merchantd/migrations
COPY --from=build /out/merchantd.toml /etc/merchantd/merchantd.toml

LABEL org.opencontainers.image.title="merchantd" \
      org.opencontainers.image.description="Multi-tenant merchant commerce API server" \
      org.opencontainers.image.licenses="Apache-2.0"

USER ${UID}:${UID}
WORKDIR /var/lib/merchantd
EXPOSE 8080 9090
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/merchantd", "--config", "/etc/merchantd/merchantd.toml"]
CMD ["serve"]
