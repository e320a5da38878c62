#!/usr/bin/env bash
# Builds a base image for deploy/docker/Dockerfile from Debian's own packages, with no image registry: mmdebstrap
# makes a minimal Debian root file system with a headless Java runtime, and podman imports it as an image.
#
#   deploy/docker/debian-base.sh [suite] [java-package]     # default: bookworm openjdk-17-jre-headless
#   podman build -f deploy/docker/Dockerfile --build-arg VERSION=... \
#       --build-arg BASE_IMAGE=localhost/sluice-base:bookworm -t sluice:VERSION .
#
# Needs mmdebstrap and podman (Debian packages of those names) and a Debian mirror. Runs as root, or as a user with
# subuid/subgid ranges (mmdebstrap --mode=unshare).
set -euo pipefail

suite=${1:-bookworm}
java=${2:-openjdk-17-jre-headless}
image=localhost/sluice-base:$suite

# apt variant: Essential packages (bash, coreutils, util-linux with chrt) plus the JRE and CA certificates, no more.
mmdebstrap --variant=apt --include="$java,ca-certificates" \
    --customize-hook='chroot "$1" apt-get clean' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/*' \
    "$suite" - \
  | podman import --change 'CMD ["bash"]' - "$image"
echo "built $image"
