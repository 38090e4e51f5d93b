# syntax=docker/dockerfile:1
# waitroom as a container: a static CGO-free binary (built by
# scripts/release.sh, as releases are), run as a non-root user, with /data
# for the signing key and the degraded-mode outbox.
#
#   docker build --build-arg VERSION=$(git describe --tags --always) -t waitroom .
#   docker run -p 8080:8080 -v waitroom-data:/data waitroom
#
# Offline, with no registry (Debian's podman or buildah): the `prebuilt`
# stage takes the files scripts/release.sh puts under dist/image and pulls
# nothing (cmd/waitroom's TestImageRuns builds and runs it):
#
#   scripts/release.sh image-root dist/image
#   podman build --target prebuilt -t waitroom .

# The same runtime files from the host's build: no stage is pulled.
FROM scratch AS prebuilt
COPY dist/image/usr /usr
COPY dist/image/etc /etc
COPY --chown=65532:65532 dist/image/data /data
COPY --chown=65532:65532 dist/image/tmp /tmp
COPY --chown=65532:65532 dist/image/keys /keys
USER 65532:65532
ENV WAITROOM_ADDR=0.0.0.0:8080 \
    WAITROOM_DATA_DIR=/data \
    WAITROOM_LOG_FORMAT=json
VOLUME /data
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/waitroom"]

FROM golang:1.26.8-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN VERSION=${VERSION} scripts/release.sh build /out/waitroom \
 && mkdir -p /out/data /out/tmp /out/keys

# A static wget for the health check: the runtime image has no shell.
FROM busybox:1.37.0-musl AS probe

# Nothing but the binary, CA certificates (rediss://, TLS to Kafka), the
# probe and /data owned by the unprivileged user.
FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/waitroom /usr/local/bin/waitroom
COPY --from=probe /bin/wget /usr/local/bin/wget
COPY --from=build --chown=65532:65532 /out/data /data
COPY --from=build --chown=65532:65532 /out/tmp /tmp
# The mount point of a shared key volume, writable by the server's user.
COPY --from=build --chown=65532:65532 /out/keys /keys
USER 65532:65532
ENV WAITROOM_ADDR=0.0.0.0:8080 \
    WAITROOM_DATA_DIR=/data \
    WAITROOM_LOG_FORMAT=json
VOLUME /data
EXPOSE 8080
# Liveness only: /readyz (can serve visitors) decides traffic, not restarts.
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
  CMD ["/usr/local/bin/wget", "-q", "-O", "/dev/null", "http://127.0.0.1:8080/healthz"]
ENTRYPOINT ["/usr/local/bin/waitroom"]
