#!/bin/sh
# Installs what the demo-model training needs: Debian's CPU build of PyTorch
# (1.13), OpenBLAS (Debian's torch calls the system libblas.so.3, and the
# reference BLAS it otherwise gets is ~10x slower at matrix products) and
# the regex module (the tokenizer's \p{L}/\p{N} pre-tokenizer), for the
# Debian python, /usr/bin/python3. Idempotent.
set -e
PY=/usr/bin/python3
if $PY -c 'import torch, regex' 2>/dev/null && dpkg -s libopenblas0-pthread >/dev/null 2>&1; then
	exit 0
fi
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
if ! $SUDO apt-get install -y python3-torch python3-regex libopenblas0-pthread; then
	$SUDO apt-get update
	$SUDO apt-get install -y python3-torch python3-regex libopenblas0-pthread
fi
$PY -c 'import torch, regex; print("torch", torch.__version__)'
