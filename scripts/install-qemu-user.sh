#!/bin/sh
# Installs qemu-aarch64 (Debian package qemu-user) so `make test` can run the
# metal/cpu arm64 kernels under emulation. Exits 0 when it is already there;
# exits non-zero, with a message, when it cannot be installed (no apt-get or
# no root), and callers then skip the arm64 tests visibly.
set -e
if command -v qemu-aarch64 >/dev/null 2>&1; then
	exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-qemu-user: apt-get not found; install qemu-user (qemu-aarch64) by hand" >&2
	exit 1
fi
SUDO=
if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
		echo "install-qemu-user: not root and no sudo; install qemu-user by hand" >&2
		exit 1
	fi
fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends qemu-user >/dev/null
command -v qemu-aarch64 >/dev/null 2>&1
