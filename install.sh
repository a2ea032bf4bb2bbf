#!/usr/bin/env sh
# Installs git-hand (the `git hand` subcommand) from this checkout.
#   ./install.sh              build and install into ${PREFIX:-$HOME/.local}
set -eu
cd "$(dirname "$0")"
PREFIX=${PREFIX:-$HOME/.local}
for tool in cargo git; do
    command -v "$tool" >/dev/null 2>&1 || {
        echo "install.sh: '$tool' is not on PATH; install it first (cargo: https://rustup.rs)" >&2
        exit 1
    }
done
cargo install --path . --locked --root "$PREFIX"
case ":$PATH:" in
    *":$PREFIX/bin:"*) ;;
    *) echo "install.sh: add $PREFIX/bin to your PATH, e.g.: export PATH=\"$PREFIX/bin:\$PATH\"" ;;
esac
echo "installed: $PREFIX/bin/git-hand (run: git hand --help)"
