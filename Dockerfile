# The static narad binary alone: no base image is pulled (CGO_ENABLED=0 build
# from `go tool task build`). Until security lands, run it with
# NARAD_SECURITY_ENABLED=false (the node refuses a secured start it cannot
# honour, and says so).
FROM scratch
COPY bin/narad /narad
ENV NARAD_DATA_DIR=/data
VOLUME ["/data"]
EXPOSE 7942 7943
ENTRYPOINT ["/narad"]
CMD ["serve"]
