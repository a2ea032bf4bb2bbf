#!/usr/bin/env sh
# Installs git-hand (the `git hand` subcommand) from this checkout: the binary, its man page (so
# `git hand --help` works), completions for bash, zsh and fish, and the documentation (README.md
# and docs/, under share/doc/git-hand, where the man page points).
#
#   ./install.sh                 build and install into ${PREFIX:-$HOME/.local}
#   ./install.sh --hooks         ... then run `git hand install` in the current repository
#   ./install.sh --uninstall     remove exactly what earlier runs installed under $PREFIX
#
# Every file and directory an install creates is listed in $PREFIX/share/git-hand/install-manifest;
# --uninstall removes those and nothing else. Running it again is safe: it rebuilds and rewrites
# the same files.
#
# On Linux with glibc it builds one static executable when the C library can be linked
# statically (build-support/static-target says why), else an ordinary one.
#
# For tests and packagers: GIT_HAND_INSTALL_DEBUG=1 passes --debug to `cargo install` (a dev
# build: quick to build, slow to run; never static). cargo's own CARGO_TARGET_DIR says where it
# builds, so a test can reuse the target directory it was itself built in.
set -eu

usage() {
    sed -n '5,7s/^#  *//p' "$0"
}

mode=install
hooks=no
for arg in "$@"; do
    case $arg in
        --uninstall) mode=uninstall ;;
        --hooks) hooks=yes ;;
        -h | --help) usage; exit 0 ;;
        *) echo "install.sh: unknown option '$arg'" >&2; usage >&2; exit 2 ;;
    esac
done
if [ "$mode" = uninstall ] && [ "$hooks" = yes ]; then
    echo "install.sh: --uninstall already removes the hooks an earlier --hooks installed; pass only --uninstall" >&2
    exit 2
fi

caller_dir=$(pwd -P)
src_dir=$(cd "$(dirname "$0")" && pwd -P)
if [ -z "${PREFIX:-}" ]; then
    [ -n "${HOME:-}" ] || {
        echo "install.sh: neither PREFIX nor HOME is set; run: PREFIX=/some/dir ./install.sh" >&2
        exit 2
    }
    PREFIX=$HOME/.local
fi
case $PREFIX in
    /*) ;;
    *) PREFIX=$caller_dir/$PREFIX ;;
esac

bin=$PREFIX/bin/git-hand
man_dir=$PREFIX/share/man/man1
doc_dir=$PREFIX/share/doc/git-hand
bash_dir=$PREFIX/share/bash-completion/completions
zsh_dir=$PREFIX/share/zsh/site-functions
fish_dir=$PREFIX/share/fish/vendor_completions.d
fish_conf_dir=$PREFIX/share/fish/vendor_conf.d
state_dir=$PREFIX/share/git-hand
manifest=$state_dir/install-manifest

say() { echo "install.sh: $*"; }
die() { echo "install.sh: $*" >&2; exit 1; }

# --- uninstall ---------------------------------------------------------------------------------

if [ "$mode" = uninstall ]; then
    if [ ! -f "$manifest" ]; then
        say "nothing to uninstall: there is no $manifest (install.sh installed nothing under $PREFIX)"
        exit 0
    fi
    # Hooks first, while the binary that puts back what they replaced is still there.
    grep '^hooks ' "$manifest" | sed 's/^hooks //' | while IFS= read -r repo; do
        if [ -d "$repo" ] && [ -x "$bin" ]; then
            "$bin" -C "$repo" uninstall ||
                echo "install.sh: git-hand's hooks in $repo were left as they are (see above)" >&2
        fi
    done
    # cargo's bookkeeping files, when our `cargo install` created them, go too once they record
    # no crate but git-hand (without cargo at hand its entry could not be taken out of them).
    crates_ours=yes
    if grep -s '^"' "$PREFIX/.crates.toml" | grep -vq '^"git-hand '; then
        crates_ours=no
    fi
    if grep -qxF "file $bin" "$manifest" && [ -e "$bin" ]; then
        if command -v cargo >/dev/null 2>&1 && grep -qs '^"git-hand ' "$PREFIX/.crates.toml"; then
            # Through cargo, so its record of what it installed stays true.
            cargo uninstall --quiet --root "$PREFIX" git-hand || rm -f "$bin"
        else
            rm -f "$bin"
            if [ "$crates_ours" = no ] && grep -qs '^"git-hand ' "$PREFIX/.crates.toml"; then
                say "cargo is not on PATH, so cargo's own list ($PREFIX/.crates.toml) still names git-hand"
            fi
        fi
    fi
    grep '^file ' "$manifest" | sed 's/^file //' | while IFS= read -r path; do
        case $path in
            "$PREFIX/.crates.toml" | "$PREFIX/.crates2.json")
                if [ "$crates_ours" = yes ]; then rm -f "$path"; fi ;;
            *) rm -f "$path" ;;
        esac
    done
    dirs=$(grep '^dir ' "$manifest" | sed 's/^dir //' | sort -r)
    rm -f "$manifest"
    # Deepest first; a directory that now holds anything else stays.
    printf '%s\n' "$dirs" | while IFS= read -r dir; do
        [ -z "$dir" ] || rmdir "$dir" 2>/dev/null || true
    done
    say "uninstalled git-hand from $PREFIX"
    # The hooks `git hand install` and `git hand spawn` wrote into repositories are not in the
    # manifest (only --hooks records its repository): without the binary, every checkout there
    # warns and every push from a slot is refused, so say so and name the way out.
    say "note: git-hand's hooks stay in every repository where \`git hand install\` or \`git hand spawn\` put them" \
        "(only those of ./install.sh --hooks were removed): there, checkouts warn and pushes from slots are refused."
    say "note: to remove them, run \`git hand uninstall\` in each such repository while git-hand is installed" \
        "(./install.sh, then \`git hand uninstall\` in each, then ./install.sh --uninstall)."
    exit 0
fi

# --- install -----------------------------------------------------------------------------------

for tool in cargo git; do
    command -v "$tool" >/dev/null 2>&1 && continue
    case $tool in
        cargo) die "cargo is not on PATH. Install Rust 1.89 or newer (https://rustup.rs), open a new shell, then run ./install.sh again." ;;
        git) die "git is not on PATH. Install git (e.g. sudo apt-get install git), then run ./install.sh again." ;;
    esac
done

# What this run created, one "file PATH", "dir PATH" or "hooks REPO" a line, merged into the
# manifest after every step so an interrupted run can still be uninstalled.
records=
save_manifest() {
    [ -d "$state_dir" ] || return 0
    {
        [ -f "$manifest" ] && cat "$manifest"
        printf '%s' "$records"
    } | awk '!seen[$0]++' >"$manifest.tmp.$$"
    mv -f "$manifest.tmp.$$" "$manifest"
}
record() {
    records="$records$1 $2
"
    save_manifest
}

# Creates a directory and each missing parent, recording every one it created.
make_dir() {
    [ -d "$1" ] && return 0
    make_dir "$(dirname "$1")"
    mkdir "$1"
    record dir "$1"
}

# Writes what `git-hand generate ARGS...` prints to $1, through a temporary file beside it: a
# failed run never leaves half a file.
generate() {
    dest=$1
    shift
    if ! "$bin" generate "$@" >"$dest.tmp.$$"; then
        rm -f "$dest.tmp.$$"
        die "'$bin generate $*' failed; nothing was written to $dest"
    fi
    mv -f "$dest.tmp.$$" "$dest"
    record file "$dest"
}

make_dir "$state_dir"
for dir in "$PREFIX/bin" "$man_dir" "$bash_dir" "$zsh_dir" "$fish_dir" "$fish_conf_dir"; do
    make_dir "$dir"
done

had_crates_toml=no had_crates2=no
[ -e "$PREFIX/.crates.toml" ] && had_crates_toml=yes
[ -e "$PREFIX/.crates2.json" ] && had_crates2=yes
say "building git-hand with cargo (a first build takes a few minutes)"
# From the source directory, so that its .cargo/config.toml (SQLite's build flags) applies.
if [ "${GIT_HAND_INSTALL_DEBUG:-}" = 1 ]; then
    (cd "$src_dir" && cargo install --path . --locked --root "$PREFIX" --debug)
elif static_target=$("$src_dir/build-support/static-target") && [ -n "$static_target" ]; then
    # One static executable: no dynamic loading at each start (see build-support/static-target).
    (cd "$src_dir" && RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" \
        cargo install --path . --locked --root "$PREFIX" --target "$static_target")
else
    (cd "$src_dir" && cargo install --path . --locked --root "$PREFIX")
fi
record file "$bin"
[ "$had_crates_toml" = no ] && [ -e "$PREFIX/.crates.toml" ] && record file "$PREFIX/.crates.toml"
[ "$had_crates2" = no ] && [ -e "$PREFIX/.crates2.json" ] && record file "$PREFIX/.crates2.json"

# The documentation the man page points to, laid out as in the checkout (README.md's links into
# docs/ keep working); each file through a temporary file beside it, as `generate` does.
make_dir "$doc_dir/docs"
for src in "$src_dir/README.md" "$src_dir"/docs/*.md; do
    doc=${src#"$src_dir/"}
    cp "$src" "$doc_dir/$doc.tmp.$$"
    mv -f "$doc_dir/$doc.tmp.$$" "$doc_dir/$doc"
    record file "$doc_dir/$doc"
done

# Generated by the binary just built, from its own clap definitions: they cannot drift.
generate "$man_dir/git-hand.1" man --doc-dir "$doc_dir"
generate "$bash_dir/git-hand" completion bash
generate "$zsh_dir/_git-hand" completion zsh
generate "$fish_dir/git-hand.fish" completion fish
# fish loads a completion file only for its own command, and `git hand` is git's: the fish
# script's last part (from its `git hand` line) goes where fish runs it at startup.
sed -n '/^# `git hand <TAB>`/,$p' "$fish_dir/git-hand.fish" >"$fish_conf_dir/git-hand.fish.tmp.$$"
mv -f "$fish_conf_dir/git-hand.fish.tmp.$$" "$fish_conf_dir/git-hand.fish"
record file "$fish_conf_dir/git-hand.fish"

version=$("$bin" --version)
say "installed $version into $PREFIX:"
echo "    $bin"
echo "    $man_dir/git-hand.1"
echo "    $doc_dir/ (README.md, docs/)"
echo "    $bash_dir/git-hand"
echo "    $zsh_dir/_git-hand"
echo "    $fish_dir/git-hand.fish"
echo "    $fish_conf_dir/git-hand.fish"

if [ "$hooks" = yes ]; then
    if repo=$(git -C "$caller_dir" rev-parse --show-toplevel 2>/dev/null) && [ -n "$repo" ]; then
        "$bin" -C "$repo" install
        record hooks "$repo"
    else
        die "--hooks: $caller_dir is not in a git repository; git-hand is installed, so cd into the repository and run: git hand install"
    fi
fi

# --- what the shell still needs ------------------------------------------------------------------

# The physical path of directory $1 (`pwd -P`: symlinks resolved; no `readlink -f` on macOS), or
# $1 itself when it is no directory. The user's PATH and PREFIX may spell one directory two ways
# (macOS reaches /var and /tmp through /private, a trailing slash), and a text comparison then
# told them to add a directory their PATH already has.
real_dir() {
    (CDPATH='' cd -P "$1" 2>/dev/null && pwd -P) || printf '%s\n' "$1"
}
# Whether the colon-separated list $1 names directory $2, however either spells it.
lists_dir() {
    want=$(real_dir "$2")
    rest=$1:
    while [ -n "$rest" ]; do
        entry=${rest%%:*}
        rest=${rest#*:}
        if [ -n "$entry" ] && [ "$(real_dir "$entry")" = "$want" ]; then return 0; fi
    done
    return 1
}
same_dir() {
    [ "$(real_dir "$1")" = "$(real_dir "$2")" ]
}

if ! lists_dir "$PATH" "$PREFIX/bin"; then
    say "$PREFIX/bin is not on your PATH, so git cannot find 'git hand' yet. Add this line to"
    # The tildes are words for the reader, the names of the files to edit, not paths to expand.
    # shellcheck disable=SC2088
    say "~/.profile, ~/.bashrc or ~/.zshrc (fish: fish_add_path $PREFIX/bin) and open a new shell:"
    echo "    export PATH=\"$PREFIX/bin:\$PATH\""
fi
# man finds pages beside the PATH entries (bin/ -> share/man/) unless MANPATH overrides it: so
# does macOS's (FreeBSD's man.sh), as man-db does.
if [ -n "${MANPATH:-}" ] && ! lists_dir "$MANPATH" "$PREFIX/share/man"; then
    say "MANPATH is set, so 'git hand --help' needs the page's directory in it:"
    echo "    export MANPATH=\"$PREFIX/share/man:\$MANPATH\""
fi
# bash-completion loads completions from its user directory and from $XDG_DATA_DIRS.
bash_user_dir=${BASH_COMPLETION_USER_DIR:-${XDG_DATA_HOME:-${HOME:-/nonexistent}/.local/share}/bash-completion}/completions
if ! lists_dir "${XDG_DATA_DIRS:-/usr/local/share:/usr/share}" "$PREFIX/share"; then
    if ! same_dir "$bash_dir" "$bash_user_dir"; then
        say "bash-completion does not look in $bash_dir; add to ~/.bashrc:"
        echo "    . \"$bash_dir/git-hand\""
    fi
    if command -v zsh >/dev/null 2>&1; then
        say "zsh: add to ~/.zshrc, before compinit:"
        echo "    fpath=(\"$zsh_dir\" \$fpath)"
    fi
    fish_user_dir=${XDG_DATA_HOME:-${HOME:-/nonexistent}/.local/share}/fish
    if command -v fish >/dev/null 2>&1 && ! same_dir "$PREFIX/share/fish" "$fish_user_dir"; then
        say "fish: add to ~/.config/fish/config.fish:"
        echo "    set -p fish_complete_path \"$fish_dir\"; source \"$fish_conf_dir/git-hand.fish\""
    fi
fi
say "next: git hand --help; then, in a repository: git hand install"
