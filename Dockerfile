# The static narad binary alone: no base image is pulled (CGO_ENABLED=0 build
# from `go tool task build`).
FROM scratch
COPY bin/narad /narad
ENTRYPOINT ["/narad"]
CMD ["version"]
