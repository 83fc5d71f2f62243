# syntax=docker/dockerfile:1
#
# One image per service, built from the repository root with the Go workspace (go.work):
#   docker build --build-arg SERVICE=edge -t chainintel/edge .
# The binary is /usr/local/bin/<service> (on PATH, so `kubectl exec deploy/edge -- edge admin ...`
# works) and the entrypoint; the runtime image is distroless/static, running as nonroot (65532).

ARG GO_VERSION=1.26

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
ARG SERVICE
ARG TARGETOS
ARG TARGETARCH
RUN test -n "$SERVICE" || { echo "build with --build-arg SERVICE=<service> (edge, ingest, transfers, ...)"; exit 1; }
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/root/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH:-amd64} GOFLAGS=-buildvcs=false \
    go build -trimpath -ldflags="-s -w" -o /out/${SERVICE} ./services/${SERVICE}/cmd/${SERVICE} \
    && ln -s ${SERVICE} /out/service

FROM gcr.io/distroless/static-debian12:nonroot
ARG SERVICE
LABEL org.opencontainers.image.title="chainintel ${SERVICE}" \
      org.opencontainers.image.source="https://github.com/chainintel/chainintel"
COPY --from=build /out/ /usr/local/bin/
USER nonroot:nonroot
EXPOSE 8080 9090
ENTRYPOINT ["/usr/local/bin/service"]
CMD ["serve"]
