#!/bin/sh
# Installs Debian's chromium so the headless web chat test in api/webui_test.go
# can run. Exits 0 when /usr/bin/chromium is already there; exits non-zero,
# with a message, when it cannot be installed (no apt-get or no root), and the
# test then skips visibly.
set -e
if [ -x /usr/bin/chromium ]; then
	exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-chromium: apt-get not found; install chromium by hand" >&2
	exit 1
fi
SUDO=
if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
		echo "install-chromium: not root and no sudo; install chromium by hand" >&2
		exit 1
	fi
fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
test -x /usr/bin/chromium
