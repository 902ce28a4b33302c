# The static narad binary alone: no base image is pulled (CGO_ENABLED=0 build
# from `go tool -modfile=tools.mod task build`, which also makes the empty bin/data directory).
# The node runs as an unprivileged numeric user; /data is created owned by
# it, so a volume mounted there starts writable. Security is on by default:
#   docker run -e NARAD_ADMIN_PASSWORD=... -p 7942:7942 narad
# (without NARAD_ADMIN_PASSWORD the generated root password is written to
# /data/admin-password).
FROM scratch
COPY bin/narad /narad
COPY --chown=65532:65532 bin/data /data
ENV NARAD_DATA_DIR=/data
USER 65532:65532
VOLUME ["/data"]
EXPOSE 7942 7942/udp 7943
ENTRYPOINT ["/narad"]
CMD ["serve"]
